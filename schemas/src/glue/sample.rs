//! A small but complete snapshot for tests: one batch service with an A100 node type and a MIG node
//! type, one cloud with a GPU flavor and an image, two VOs. Built in code so the model's own tests
//! need no config parser. Enabled for this crate's tests and, through the `test-support` feature, for
//! other crates' tests.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use super::*;
use crate::gpu::{Capacity, GpuCount, GpuModel, GpuSpec, MemoryMb, Sharing, Virtualization};
use crate::names::{Fqan, LocalId, SiteName, Text, VoName};

fn text(value: &str) -> Text {
    Text::new(value).expect("sample text is valid")
}

fn id(value: &str) -> LocalId {
    LocalId::new(value).expect("sample id is valid")
}

fn vo(name: &str) -> VoAccess {
    VoAccess {
        vo: VoName::new(name).expect("sample VO is valid"),
        fqan: Some(Fqan::new(format!("/{name}")).expect("sample FQAN is valid")),
    }
}

fn a100() -> GpuSpec {
    let mut gpu = GpuSpec::new(text("NVIDIA"), GpuModel::literal("NVIDIA A100-SXM4-80GB"));
    gpu.memory = Some(MemoryMb::new(81_920));
    gpu.compute_capability = Some(text("8.0"));
    gpu
}

fn capacity(total: u32, used: u32, unavailable: u32) -> Capacity {
    Capacity::from_usage(
        GpuCount::whole(total),
        GpuCount::whole(used),
        GpuCount::whole(unavailable),
    )
    .expect("sample capacity adds up")
}

fn endpoint(url: &str, interface: &str, vos: &[&str]) -> Endpoint {
    Endpoint {
        local_id: id("main"),
        url: text(url),
        interface_name: text(interface),
        interface_version: Some(text("1")),
        implementation_name: None,
        implementation_version: None,
        technology: text("webservice"),
        quality_level: text("production"),
        serving_state: text("production"),
        health_state: text("ok"),
        health_state_info: None,
        capabilities: vec![text("executionmanagement.jobexecution")],
        access: vos.iter().map(|name| vo(name)).collect(),
    }
}

/// The sample snapshot, for a site of the given name.
pub fn snapshot(site: &str) -> SiteSnapshot {
    let mut mig = a100();
    mig.virtualization = Virtualization::Mig;
    mig.mig_profile = Some(text("3g.40gb"));
    mig.memory = Some(MemoryMb::new(40_960));
    // A 3g.40gb slice is 3 of an A100's 7 compute slices.
    mig.sharing = Sharing::Mig {
        profile: text("3g.40gb"),
        slices: 3,
        of: 7,
    };

    let batch = ComputingService {
        local_id: id("hpc"),
        name: Some(text("GPU cluster")),
        quality_level: text("production"),
        capabilities: vec![text("executionmanagement.jobexecution")],
        endpoints: vec![endpoint(
            "https://hpc.example.org:6820",
            "slurm",
            &["atlas", "biomed"],
        )],
        manager: ComputingManager {
            product_name: text("SLURM"),
            product_version: Some(text("23.02.7")),
            environments: vec![
                ExecutionEnvironment {
                    local_id: id("a100"),
                    name: Some(text("A100 nodes")),
                    platform: text("amd64"),
                    total_instances: 4,
                    used_instances: 2,
                    unavailable_instances: 1,
                    physical_cpus: Some(2),
                    logical_cpus: Some(128),
                    main_memory: Some(MemoryMb::new(512_000)),
                    os_family: text("linux"),
                    os_name: Some(text("RockyLinux")),
                    os_version: Some(text("9.4")),
                    accelerators: vec![AcceleratorEnvironment {
                        local_id: id("gpu"),
                        gpu: a100(),
                        physical_per_instance: GpuCount::whole(4),
                        logical_per_instance: GpuCount::whole(4),
                        capacity: capacity(16, 6, 4),
                    }],
                },
                ExecutionEnvironment {
                    local_id: id("a100-mig"),
                    name: None,
                    platform: text("amd64"),
                    total_instances: 1,
                    used_instances: 0,
                    unavailable_instances: 0,
                    physical_cpus: None,
                    logical_cpus: None,
                    main_memory: None,
                    os_family: text("linux"),
                    os_name: None,
                    os_version: None,
                    accelerators: vec![AcceleratorEnvironment {
                        local_id: id("mig-3g.40gb"),
                        gpu: mig.clone(),
                        physical_per_instance: GpuCount::whole(2),
                        logical_per_instance: GpuCount::whole(4),
                        capacity: capacity(4, 1, 0),
                    }],
                },
            ],
            accelerators: vec![AcceleratorCapacity {
                local_id: id("a100"),
                gpu: a100(),
                capacity: capacity(16, 6, 4),
                max_per_job: None,
            }],
        },
        shares: vec![ComputingShare {
            local_id: id("gpu"),
            name: Some(text("gpu partition")),
            mapping_queue: Some(text("gpu")),
            serving_state: text("production"),
            max_wall_time_s: Some(172_800),
            slots: ShareSlots {
                free: Some(640),
                used: Some(384),
                max_per_job: Some(1024),
            },
            access: vec![vo("atlas"), vo("biomed")],
            environments: vec![id("a100"), id("a100-mig")],
            accelerators: vec![AcceleratorCapacity {
                local_id: id("gpu/a100"),
                gpu: a100(),
                capacity: capacity(16, 6, 4),
                max_per_job: Some(GpuCount::whole(8)),
            }],
        }],
        other_info: BTreeMap::new(),
    };

    let mut passthrough = a100();
    passthrough.virtualization = Virtualization::Passthrough;
    let cloud = CloudService {
        local_id: id("cloud"),
        name: Some(text("GPU cloud")),
        quality_level: text("production"),
        capabilities: vec![text("executionmanagement.dynamicvmdeploy")],
        endpoints: vec![endpoint(
            "https://cloud.example.org:5000/v3",
            "org.openstack.nova",
            &["atlas"],
        )],
        manager: CloudManager {
            product_name: text("OpenStack"),
            product_version: Some(text("zed")),
            hypervisor_name: Some(text("KVM")),
            total_cpus: Some(256),
            total_ram: Some(MemoryMb::new(2_048_000)),
            accelerators: vec![AcceleratorCapacity {
                local_id: id("a100-passthrough"),
                gpu: passthrough.clone(),
                capacity: capacity(8, 3, 0),
                max_per_job: None,
            }],
        },
        shares: vec![CloudShare {
            local_id: id("atlas"),
            name: Some(text("atlas")),
            access: vo("atlas"),
            project_id: Some(text("0123456789abcdef")),
            max_vm: Some(20),
            running_vm: Some(3),
            max_gpus: Some(GpuCount::whole(8)),
            accelerators: vec![AcceleratorCapacity {
                local_id: id("atlas/a100"),
                gpu: passthrough.clone(),
                capacity: capacity(8, 3, 0),
                max_per_job: None,
            }],
        }],
        instance_types: vec![InstanceType {
            local_id: id("g1.a100x2"),
            name: text("g1.a100x2"),
            platform: text("amd64"),
            cpu: 16,
            ram: MemoryMb::new(128_000),
            disk_gb: 100,
            os_family: None,
            accelerator: Some(VirtualAccelerator {
                gpu: passthrough,
                count: GpuCount::whole(2),
            }),
            shares: vec![id("atlas")],
            other_info: BTreeMap::new(),
        }],
        images: vec![Image {
            local_id: id("ubuntu-cuda"),
            name: text("Ubuntu 22.04 CUDA"),
            os_platform: Some(text("amd64")),
            os_name: Some(text("Ubuntu")),
            os_version: Some(text("22.04")),
            marketplace_url: None,
            description: None,
            shares: vec![id("atlas")],
            gpu_driver_version: Some(text("550.54.15")),
            cuda_version: Some(text("12.4")),
        }],
        other_info: BTreeMap::from([("gocdb_id".to_owned(), "1234G0".to_owned())]),
    };

    SiteSnapshot {
        domain: AdminDomain {
            name: SiteName::new(site).expect("sample site name is valid"),
            description: Some(text("A sample GPU site")),
            www: Some(text("https://example.org")),
            gocdb_id: Some(text("1234G0")),
            location: Some(Location {
                place: Some(text("Amsterdam")),
                country: Some(text("NL")),
                latitude: Some(52.37),
                longitude: Some(4.89),
            }),
            contacts: vec![Contact {
                kind: text("sysadmin"),
                detail: text("mailto:grid-admin@example.org"),
            }],
            other_info: BTreeMap::new(),
        },
        services: vec![Service::Computing(batch), Service::Cloud(cloud)],
        creation_time: Utc
            .with_ymd_and_hms(2026, 11, 1, 12, 0, 0)
            .single()
            .expect("valid time"),
        validity_s: 3600,
    }
}
