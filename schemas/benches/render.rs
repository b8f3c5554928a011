//! Rendering a large site in every format.
//!
//! The generated site is what a big federation member publishes: a batch system with 2,500 node
//! types, each split into 7 accelerator environments (whole GPUs and MIG slices), and a cloud with
//! 2,500 GPU flavors. That is 5,000 execution environments / instance types and 20,000 accelerator
//! entries (17,500 accelerator environments plus 2,500 virtual accelerators), plus shares, policies
//! and images. Target: under 50 ms per format in a release build.
//!
//! Run with `cargo bench -p accelfed-schemas --bench render`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use accelfed_schemas::glue::*;
use accelfed_schemas::gpu::{Capacity, GpuCount, GpuModel, GpuSpec, MemoryMb, Virtualization};
use accelfed_schemas::names::{Fqan, LocalId, SiteName, Text, VoName};
use accelfed_schemas::render::{Format, render};
use chrono::{TimeZone, Utc};
use criterion::{Criterion, criterion_group, criterion_main};

/// The allocator the `accelfed` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODE_TYPES: usize = 2_500;
const FLAVORS: usize = 2_500;
const PARTITIONS: usize = 8;
const PROJECTS: usize = 20;
const IMAGES: usize = 200;

/// (model, memory MB, compute capability) of the GPUs the generated site has.
const MODELS: [(&str, u64, &str); 5] = [
    ("NVIDIA A100-SXM4-80GB", 81_920, "8.0"),
    ("NVIDIA H100 80GB HBM3", 81_559, "9.0"),
    ("NVIDIA L40S", 46_068, "8.9"),
    ("NVIDIA A40", 46_068, "8.6"),
    ("NVIDIA V100-SXM2-32GB", 32_768, "7.0"),
];

/// One whole-GPU environment, five MIG profiles and a time-sliced one: 7 per node type.
const SLICES: [(&str, Option<&str>, Virtualization, u32); 7] = [
    ("gpu", None, Virtualization::None, 1),
    ("mig-1g.10gb", Some("1g.10gb"), Virtualization::Mig, 7),
    ("mig-2g.20gb", Some("2g.20gb"), Virtualization::Mig, 3),
    ("mig-3g.40gb", Some("3g.40gb"), Virtualization::Mig, 2),
    ("mig-4g.40gb", Some("4g.40gb"), Virtualization::Mig, 1),
    ("mig-7g.80gb", Some("7g.80gb"), Virtualization::Mig, 1),
    ("shared", None, Virtualization::TimeSlicing, 4),
];

fn text(value: impl AsRef<str>) -> Text {
    Text::new(value).expect("generated text is valid")
}

fn id(value: impl AsRef<str>) -> LocalId {
    LocalId::new(value).expect("generated id is valid")
}

fn vo(index: usize) -> VoAccess {
    let name = format!("vo{index:02}.example.eu");
    VoAccess {
        vo: VoName::new(name.clone()).expect("valid VO"),
        fqan: Some(Fqan::new(format!("/{name}")).expect("valid FQAN")),
    }
}

fn gpu(index: usize) -> GpuSpec {
    let (model, memory, capability) = MODELS[index % MODELS.len()];
    let mut gpu = GpuSpec::new(text("NVIDIA"), GpuModel::new(model).expect("valid model"));
    gpu.memory = Some(MemoryMb::new(memory));
    gpu.compute_capability = Some(text(capability));
    gpu.driver_version = Some(text("550.54.15"));
    gpu.cuda_version = Some(text("12.4"));
    gpu
}

fn capacity(total: u32, used: u32, unavailable: u32) -> Capacity {
    Capacity::from_usage(
        GpuCount::whole(total),
        GpuCount::whole(used),
        GpuCount::whole(unavailable),
    )
    .expect("generated capacity adds up")
}

fn endpoint(url: &str, interface: &str, vos: usize) -> Endpoint {
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
        access: (0..vos).map(vo).collect(),
    }
}

fn node_type(index: usize) -> ExecutionEnvironment {
    let nodes = 4 + (index % 13) as u32;
    let accelerators = SLICES
        .iter()
        .map(|(slice, profile, virtualization, per_gpu)| {
            let mut gpu = gpu(index);
            gpu.virtualization = *virtualization;
            gpu.mig_profile = profile.map(text);
            let per_node = 4 * per_gpu;
            let total = per_node * nodes;
            AcceleratorEnvironment {
                local_id: id(*slice),
                gpu,
                physical_per_instance: GpuCount::whole(4),
                logical_per_instance: GpuCount::whole(per_node),
                capacity: capacity(total, total / 2, per_node),
            }
        })
        .collect();
    ExecutionEnvironment {
        local_id: id(format!("gpu-node-{index:04}")),
        name: Some(text(format!("GPU nodes rack {} type {index}", index / 40))),
        platform: text("amd64"),
        total_instances: nodes,
        used_instances: nodes / 2,
        unavailable_instances: 1,
        physical_cpus: Some(2),
        logical_cpus: Some(128),
        main_memory: Some(MemoryMb::new(512_000)),
        os_family: text("linux"),
        os_name: Some(text("RockyLinux")),
        os_version: Some(text("9.4")),
        accelerators,
    }
}

fn batch() -> ComputingService {
    let environments: Vec<ExecutionEnvironment> = (0..NODE_TYPES).map(node_type).collect();
    let shares = (0..PARTITIONS)
        .map(|p| ComputingShare {
            local_id: id(format!("gpu-{p}")),
            name: Some(text(format!("GPU partition {p}"))),
            mapping_queue: Some(text(format!("gpu-{p}"))),
            serving_state: text("production"),
            max_wall_time_s: Some(172_800),
            slots: Default::default(),
            access: vec![vo(p), vo(p + PARTITIONS)],
            // Each node type is in two partitions.
            environments: environments
                .iter()
                .enumerate()
                .filter(|(i, _)| i % PARTITIONS == p || (i + 1) % PARTITIONS == p)
                .map(|(_, ee)| ee.local_id.clone())
                .collect(),
            accelerators: (0..MODELS.len())
                .map(|m| AcceleratorCapacity {
                    local_id: id(format!("gpu-{p}/{m}")),
                    gpu: gpu(m),
                    capacity: capacity(4_000, 1_500, 100),
                    max_per_job: Some(GpuCount::whole(8)),
                })
                .collect(),
        })
        .collect();
    ComputingService {
        local_id: id("hpc"),
        name: Some(text("GPU cluster")),
        quality_level: text("production"),
        capabilities: vec![text("executionmanagement.jobexecution")],
        endpoints: vec![endpoint(
            "https://hpc.example.org:6820",
            "slurm",
            PARTITIONS * 2,
        )],
        manager: ComputingManager {
            product_name: text("SLURM"),
            product_version: Some(text("23.02.7")),
            environments,
            accelerators: (0..MODELS.len())
                .map(|m| AcceleratorCapacity {
                    local_id: id(format!("model-{m}")),
                    gpu: gpu(m),
                    capacity: capacity(20_000, 8_000, 500),
                    max_per_job: None,
                })
                .collect(),
        },
        shares,
        other_info: BTreeMap::new(),
    }
}

fn flavor(index: usize) -> InstanceType {
    let count = 1 + (index % 8) as u32;
    let mut gpu = gpu(index);
    gpu.virtualization = if index.is_multiple_of(3) {
        Virtualization::Vgpu
    } else {
        Virtualization::Passthrough
    };
    InstanceType {
        local_id: id(format!("{index:08x}-6f1c-4a1e-9d2b-gpu")),
        name: text(format!("g{}.{}xlarge.{index}", count, 2 * count)),
        platform: text("amd64"),
        cpu: 8 * count,
        ram: MemoryMb::new(65_536 * u64::from(count)),
        disk_gb: 100,
        os_family: None,
        accelerator: Some(VirtualAccelerator {
            gpu,
            count: GpuCount::whole(count),
        }),
        shares: vec![
            id(format!("project-{:02}", index % PROJECTS)),
            id(format!("project-{:02}", (index + 7) % PROJECTS)),
        ],
        other_info: BTreeMap::from([("pci_alias".to_owned(), format!("gpu-{}", index % 5))]),
    }
}

fn cloud() -> CloudService {
    let mut passthrough = gpu(0);
    passthrough.virtualization = Virtualization::Passthrough;
    CloudService {
        local_id: id("cloud"),
        name: Some(text("GPU cloud")),
        quality_level: text("production"),
        capabilities: vec![text("executionmanagement.dynamicvmdeploy")],
        endpoints: vec![endpoint(
            "https://cloud.example.org:5000/v3",
            "org.openstack.nova",
            PROJECTS,
        )],
        manager: CloudManager {
            product_name: text("OpenStack"),
            product_version: Some(text("2024.1")),
            hypervisor_name: Some(text("KVM")),
            total_cpus: Some(40_000),
            total_ram: Some(MemoryMb::new(320_000_000)),
            accelerators: vec![AcceleratorCapacity {
                local_id: id("a100-passthrough"),
                gpu: passthrough.clone(),
                capacity: capacity(2_000, 900, 20),
                max_per_job: None,
            }],
        },
        shares: (0..PROJECTS)
            .map(|p| CloudShare {
                local_id: id(format!("project-{p:02}")),
                name: Some(text(format!("vo{p:02}.example.eu"))),
                access: vo(p),
                project_id: Some(text(format!("{p:032x}"))),
                max_vm: Some(200),
                running_vm: Some(37),
                max_gpus: Some(GpuCount::whole(64)),
                accelerators: vec![AcceleratorCapacity {
                    local_id: id(format!("project-{p:02}/a100")),
                    gpu: passthrough.clone(),
                    capacity: capacity(64, 20, 0),
                    max_per_job: None,
                }],
            })
            .collect(),
        instance_types: (0..FLAVORS).map(flavor).collect(),
        images: (0..IMAGES)
            .map(|i| Image {
                local_id: id(format!("image-{i:04}")),
                name: text(format!("Ubuntu 22.04 CUDA 12.{} build {i}", i % 5)),
                os_platform: Some(text("amd64")),
                os_name: Some(text("Ubuntu")),
                os_version: Some(text("22.04")),
                marketplace_url: Some(text(format!(
                    "https://appdb.egi.eu/store/vm/image/{i:08x}/"
                ))),
                description: Some(text("GPU-ready image with the NVIDIA driver & CUDA")),
                shares: vec![id(format!("project-{:02}", i % PROJECTS))],
                gpu_driver_version: Some(text("550.54.15")),
                cuda_version: Some(text(format!("12.{}", i % 5))),
            })
            .collect(),
        other_info: BTreeMap::from([("gocdb_id".to_owned(), "1234G0".to_owned())]),
    }
}

/// The generated site.
fn site() -> SiteSnapshot {
    SiteSnapshot {
        domain: AdminDomain {
            name: SiteName::new("BIG-GPU-SITE").expect("valid"),
            description: Some(text("A large GPU site")),
            www: Some(text("https://gpu.example.org")),
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
        services: vec![Service::Computing(batch()), Service::Cloud(cloud())],
        creation_time: Utc
            .with_ymd_and_hms(2026, 11, 1, 12, 0, 0)
            .single()
            .expect("valid time"),
        validity_s: 3600,
    }
}

fn bench_render(c: &mut Criterion) {
    let snapshot = site();
    let entities = snapshot.entities();
    let accelerators = entities
        .iter()
        .filter(|e| e.class.name().contains("Accelerator"))
        .count();
    eprintln!(
        "generated site: {} entities, {accelerators} accelerator entities",
        entities.len()
    );
    let mut group = c.benchmark_group("render");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("entities", |b| b.iter(|| black_box(&snapshot).entities()));
    for format in Format::ALL {
        let bytes = render(&snapshot, format);
        eprintln!("{format}: {} bytes", bytes.len());
        // Optimising a renderer must not change its bytes: dump them to compare before and after.
        if let Some(dir) = std::env::var_os("ACCELFED_RENDER_DUMP") {
            let path = std::path::Path::new(&dir).join(format.as_str());
            std::fs::write(&path, &bytes).expect("write the rendering");
        }
        group.bench_function(format.as_str(), |b| {
            b.iter(|| render(black_box(&snapshot), format))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
