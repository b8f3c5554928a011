//! The OpenStack provider and meter over the recorded responses of a large cloud (issue 6): 500
//! flavors, 2,000 GPU resource providers (200 hosts with 8 V100s for PCI passthrough, 50 hosts with
//! 8 physical A100s of 8 vGPUs each) under 250 compute roots, 50 VO projects, 100,000 servers.
//!
//! The responses are generated in the shapes of the real captures of the small test cloud
//! (`provider/tests/fixtures/openstack/`: each generated object is a recorded one with its ids,
//! names, flavor and times changed), as the client would receive them: Nova pages of 1,000
//! (`flavors/detail` at 2.61, `servers/detail?all_tenants=1` at 2.93 with embedded flavors),
//! Keystone projects with a `VO` property, the Placement provider list and each provider's
//! inventories (usages where GPUs are, traits where vGPUs are), flavor access of private flavors,
//! each project's `/limits` (its quotas), Glance images.
//!
//! The floor is serde_json reading the same response bytes into `serde::de::IgnoredAny`
//! (`from_slice`, the client's own path). Timed against it:
//! * provide: every response read as the client reads it, then `openstack::map`;
//! * meter: flavors, projects and servers read as the client reads them, `openstack::map_usage`,
//!   `openstack::observations`, and the accounting side's `records_for` (monthly records), with the
//!   floor over those same responses.
//!
//! A `cargo bench` target without a harness (figures in BENCHMARKS.md, `## OpenStack`):
//!
//! ```text
//! cargo bench --workspace --locked --bench openstack_scale
//! ```
//!
//! Without `--bench` (as `cargo test` runs it: the target has `test = true`) it runs only the
//! small check, on a tenth of the cloud, that the generated responses say what the benchmark
//! claims: GPU totals, used GPUs and GPU VMs per VO.

#![allow(clippy::unwrap_used)]

/// The allocator the `accelfed` binary runs with (cli/src/main.rs), so what is timed here is what
/// `accelfed provide` and `accelfed meter` do: a run allocates a buffer per server.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use accelfed_accounting::meter::records_for;
use accelfed_provider::openstack::api::{
    Flavor, FlavorAccess, GlanceImage, Inventories, Project, ProjectQuota, ResourceProvider,
    Server, Traits, Usages,
};
use accelfed_provider::openstack::client::read_nova_page;
use accelfed_provider::openstack::{
    CloudState, OpenstackConfig, ProviderState, VmUsage, map, map_usage, observations,
};
use accelfed_schemas::names::SiteName;

const FLAVORS: usize = 500;
const V100_HOSTS: usize = 200;
const A100_HOSTS: usize = 50;
const GPUS_PER_HOST: usize = 8;
const VGPUS_PER_GPU: u64 = 8;
const PROJECTS: usize = 50;
const SERVERS: usize = 100_000;
const PAGE: usize = 1_000;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../provider/tests/fixtures/openstack")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A uuid-shaped id, distinct per kind and number.
fn uuid(kind: u32, n: usize) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        kind as usize * 0x1000_0000 + n,
        n % 65_536,
        kind,
        (n / 7) % 4096,
        n * 40_503
    )
}

/// One provider's inventories, then its usages and traits where the client asks for them.
type ProviderDocs = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// The responses of the generated cloud, as the client would receive them.
struct Responses {
    flavor_pages: Vec<Vec<u8>>,
    server_pages: Vec<Vec<u8>>,
    projects: Vec<u8>,
    provider_list: Vec<u8>,
    /// Per provider, in list order: inventories, then usages and traits where the client asks.
    provider_docs: Vec<ProviderDocs>,
    flavor_access: Vec<(String, Vec<u8>)>,
    quotas: Vec<(String, Vec<u8>)>,
    images: Vec<u8>,
}

impl Responses {
    fn bytes(&self) -> usize {
        self.meter_documents().map(<[u8]>::len).sum::<usize>()
            + self.provider_list.len()
            + self
                .provider_docs
                .iter()
                .map(|(i, u, t)| {
                    i.len() + u.as_ref().map_or(0, Vec::len) + t.as_ref().map_or(0, Vec::len)
                })
                .sum::<usize>()
            + self
                .flavor_access
                .iter()
                .map(|(_, d)| d.len())
                .sum::<usize>()
            + self.quotas.iter().map(|(_, d)| d.len()).sum::<usize>()
            + self.images.len()
    }

    /// What the meter reads: flavors, projects, servers.
    /// What `accelfed meter` reads: flavors, servers, projects and, because the cloud has vGPU
    /// flavors, Placement's providers (their vGPUs per physical GPU make a vGPU's share).
    fn meter_documents(&self) -> impl Iterator<Item = &[u8]> {
        self.flavor_pages
            .iter()
            .chain(&self.server_pages)
            .map(Vec::as_slice)
            .chain(std::iter::once(self.projects.as_slice()))
            .chain(std::iter::once(self.provider_list.as_slice()))
            .chain(self.provider_docs.iter().flat_map(|(i, u, t)| {
                std::iter::once(i.as_slice())
                    .chain(u.as_deref())
                    .chain(t.as_deref())
            }))
    }

    fn all_documents(&self) -> impl Iterator<Item = &[u8]> {
        self.meter_documents()
            .chain(self.flavor_access.iter().map(|(_, d)| d.as_slice()))
            .chain(self.quotas.iter().map(|(_, d)| d.as_slice()))
            .chain(std::iter::once(self.images.as_slice()))
    }
}

/// Flavor `n`: a fifth each PCI alias, vGPU, EGI keys (with the alias Nova schedules by), a
/// `resources:CUSTOM_PCI_*` class, and no GPU; every tenth private.
fn flavor_specs(n: usize) -> (String, Value) {
    let count = [1, 2, 4, 8][(n / 5) % 4];
    match n % 5 {
        0 => (
            format!("g1.v100x{count}.{n}"),
            json!({"pci_passthrough:alias": format!("nvidia-v100:{count}")}),
        ),
        1 => (
            format!("vg1.a100-4c.{n}"),
            json!({"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A100_4C": "required"}),
        ),
        2 => (
            format!("egi.v100x{count}.{n}"),
            json!({"Accelerator:Type": "GPU", "Accelerator:Vendor": "NVIDIA",
                "Accelerator:Model": "Tesla V100-PCIE-16GB", "Accelerator:Number": count.to_string(),
                "Accelerator:Memory": "16", "Accelerator:VirtualizationType": "passthrough",
                "pci_passthrough:alias": format!("nvidia-v100:{count}")}),
        ),
        3 => (
            format!("p1.v100x{count}.{n}"),
            json!({"resources:CUSTOM_PCI_10DE_1DB4": count.to_string(),
                "hw:cpu_policy": "dedicated"}),
        ),
        _ => (
            format!("m1.cpu.{n}"),
            json!({"hw:cpu_policy": "shared", "quota:disk_read_iops_sec": "5000"}),
        ),
    }
}

fn page_of(key: &str, items: &[Value], next: Option<String>) -> Vec<u8> {
    let mut page = json!({ key: items });
    if let Some(marker) = next {
        page[format!("{key}_links")] = json!([{"rel": "next", "href": format!(
            "http://127.0.0.1:8774/v2.1/{key}/detail?limit={PAGE}&marker={marker}")}]);
    }
    serde_json::to_vec(&page).unwrap()
}

fn paginate(key: &str, items: &[Value]) -> Vec<Vec<u8>> {
    items
        .chunks(PAGE)
        .enumerate()
        .map(|(index, chunk)| {
            let more = (index + 1) * PAGE < items.len();
            let last = chunk
                .last()
                .and_then(|i| i["id"].as_str())
                .map(str::to_owned);
            page_of(key, chunk, last.filter(|_| more))
        })
        .collect()
}

/// The project a server belongs to.
fn project_id(n: usize) -> String {
    uuid(3, n % PROJECTS).replace('-', "")
}

fn generate(servers: usize) -> Responses {
    let flavor_template = fixture("nova-flavors-detail-2.61.json")["flavors"][0].clone();
    let flavors: Vec<Value> = (0..FLAVORS)
        .map(|n| {
            let (name, specs) = flavor_specs(n);
            let mut f = flavor_template.clone();
            let id = uuid(1, n);
            f["id"] = json!(id);
            f["name"] = json!(name);
            f["vcpus"] = json!(4 * (1 + n % 8));
            f["ram"] = json!(8192 * (1 + n % 8));
            f["os-flavor-access:is_public"] = json!(n % 10 != 9);
            f["extra_specs"] = specs;
            f["links"][0]["href"] = json!(format!("http://127.0.0.1:8774/v2.1/flavors/{id}"));
            f["links"][1]["href"] = json!(format!("http://127.0.0.1:8774/flavors/{id}"));
            f
        })
        .collect();
    let flavor_access = flavors
        .iter()
        .filter(|f| f["os-flavor-access:is_public"] == false)
        .enumerate()
        .map(|(k, f)| {
            let id = f["id"].as_str().unwrap().to_owned();
            let doc = json!({"flavor_access": [
                {"flavor_id": id, "tenant_id": project_id(k)},
                {"flavor_id": id, "tenant_id": project_id(k + 1)}]});
            (id, serde_json::to_vec(&doc).unwrap())
        })
        .collect();

    let project_template = fixture("keystone-projects.json")["projects"][0].clone();
    let projects: Vec<Value> = (0..PROJECTS)
        .map(|n| {
            let mut p = project_template.clone();
            let id = project_id(n);
            p["id"] = json!(id);
            p["name"] = json!(format!("vo-{n:02}"));
            p["description"] = json!(format!("VO project {n}"));
            p["VO"] = json!(format!("vo{n:02}.example.org"));
            p["links"]["self"] = json!(format!("http://127.0.0.1:5000/v3/projects/{id}"));
            p
        })
        .collect();
    let projects_doc = serde_json::to_vec(&json!({"projects": projects, "links": {
        "next": null, "self": "http://127.0.0.1:5000/v3/projects", "previous": null}}))
    .unwrap();

    // Servers: round-robin over projects and GPU-or-not flavors; a twentieth shelved, a twentieth
    // deleted (as `changes-since` returns them).
    let server_template = fixture("nova-servers-detail-alltenants-2.93.json")["servers"][0].clone();
    let start = Utc.with_ymd_and_hms(2026, 10, 1, 0, 0, 0).unwrap();
    let mut used_v100 = 0u64;
    let mut used_vgpu = 0u64;
    let server_values: Vec<Value> = (0..servers)
        .map(|n| {
            let flavor = &flavors[(n * 7) % FLAVORS];
            let mut s = server_template.clone();
            let id = uuid(2, n);
            let created = start + chrono::Duration::seconds((n as i64 * 37) % (50 * 86_400));
            let status = match n % 20 {
                0 => "SHELVED_OFFLOADED",
                1 => "DELETED",
                _ => "ACTIVE",
            };
            s["id"] = json!(id);
            s["name"] = json!(format!("vm-{n}"));
            s["status"] = json!(status);
            s["OS-EXT-STS:vm_state"] = json!(status.to_ascii_lowercase());
            s["tenant_id"] = json!(project_id(n));
            s["user_id"] = json!(uuid(4, n % 3_000).replace('-', ""));
            s["created"] = json!(created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            let updated = created + chrono::Duration::hours(1 + (n % 300) as i64);
            s["updated"] = json!(updated.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            s["OS-SRV-USG:launched_at"] =
                json!(created.format("%Y-%m-%dT%H:%M:%S.000000").to_string());
            if status == "DELETED" {
                s["OS-SRV-USG:terminated_at"] =
                    json!(updated.format("%Y-%m-%dT%H:%M:%S.000000").to_string());
            }
            let host = format!("gpu-{:03}", n % (V100_HOSTS + A100_HOSTS));
            s["OS-EXT-SRV-ATTR:host"] = json!(host);
            s["OS-EXT-SRV-ATTR:hypervisor_hostname"] = json!(host);
            s["OS-EXT-SRV-ATTR:instance_name"] = json!(format!("instance-{n:08x}"));
            s["OS-EXT-SRV-ATTR:hostname"] = json!(format!("vm-{n}"));
            s["flavor"] = json!({"vcpus": flavor["vcpus"], "ram": flavor["ram"], "disk": flavor["disk"],
                "ephemeral": 0, "swap": 0, "original_name": flavor["name"],
                "extra_specs": flavor["extra_specs"]});
            s["links"][0]["href"] = json!(format!("http://127.0.0.1:8774/v2.1/servers/{id}"));
            s["links"][1]["href"] = json!(format!("http://127.0.0.1:8774/servers/{id}"));
            if status == "ACTIVE" {
                let specs = &flavor["extra_specs"];
                if specs.get("resources:VGPU").is_some() {
                    used_vgpu += 1;
                } else if let Some(alias) = specs["pci_passthrough:alias"].as_str() {
                    used_v100 += alias.split(':').nth(1).unwrap().parse::<u64>().unwrap();
                } else if let Some(count) = specs["resources:CUSTOM_PCI_10DE_1DB4"].as_str() {
                    used_v100 += count.parse::<u64>().unwrap();
                }
            }
            s
        })
        .collect();

    // Placement: usages spread the used GPUs over the providers, capped at their inventory.
    let rp_template =
        fixture("placement-resource_providers-1.39.json")["resource_providers"][0].clone();
    let root_inventory = fixture("placement-rp-gpu-v100-01-inventories.json");
    let pci_inventory = fixture("placement-rp-gpu-v100-01_0000-3B-00.0-inventories.json");
    let vgpu_inventory = fixture("placement-rp-gpu-a100-01_pci_0000_81_00_0-inventories.json");
    let vgpu_traits = fixture("placement-rp-gpu-a100-01_pci_0000_81_00_0-traits.json");
    let provider = |uuid: &str, name: &str, root: &str, parent: Option<&str>| {
        let mut rp = rp_template.clone();
        rp["uuid"] = json!(uuid);
        rp["name"] = json!(name);
        rp["parent_provider_uuid"] = json!(parent);
        rp["root_provider_uuid"] = json!(root);
        for link in rp["links"].as_array_mut().unwrap() {
            let href = link["href"].as_str().unwrap().to_owned();
            let tail = href
                .rsplit_once(rp_template["uuid"].as_str().unwrap())
                .unwrap()
                .1;
            link["href"] = json!(format!("/resource_providers/{uuid}{tail}"));
        }
        rp
    };
    let mut list = Vec::new();
    let mut docs = Vec::new();
    let (mut v100_left, mut vgpu_left) = (used_v100.min(1_600), used_vgpu.min(3_200));
    for host in 0..V100_HOSTS + A100_HOSTS {
        let root = uuid(5, host);
        let host_name = format!("gpu-{host:03}");
        list.push(provider(&root, &host_name, &root, None));
        docs.push((serde_json::to_vec(&root_inventory).unwrap(), None, None));
        for gpu in 0..GPUS_PER_HOST {
            let child = uuid(6, host * GPUS_PER_HOST + gpu);
            let a100 = host >= V100_HOSTS;
            let name = if a100 {
                format!("{host_name}_pci_0000_{:02x}_00_0", 0x81 + gpu)
            } else {
                format!("{host_name}_0000:{:02X}:00.0", 0x3B + gpu)
            };
            list.push(provider(&child, &name, &root, Some(&root)));
            let (class, inventory, used) = if a100 {
                let used = vgpu_left.min(VGPUS_PER_GPU);
                vgpu_left -= used;
                ("VGPU", &vgpu_inventory, used)
            } else {
                let used = v100_left.min(1);
                v100_left -= used;
                ("CUSTOM_PCI_10DE_1DB4", &pci_inventory, used)
            };
            let usages = json!({"resource_provider_generation": 6, "usages": {class: used}});
            docs.push((
                serde_json::to_vec(inventory).unwrap(),
                Some(serde_json::to_vec(&usages).unwrap()),
                a100.then(|| serde_json::to_vec(&vgpu_traits).unwrap()),
            ));
        }
    }
    let provider_list = serde_json::to_vec(&json!({"resource_providers": list})).unwrap();
    let quotas = (0..PROJECTS)
        .map(|n| {
            let id = project_id(n);
            let doc = json!({"limits": {"rate": [], "absolute": {
                "maxTotalInstances": 4000, "maxTotalCores": 2048, "maxTotalRAMSize": 16_384_000,
                "maxServerMeta": 128, "maxImageMeta": 128, "maxPersonality": 5,
                "maxPersonalitySize": 10240, "maxTotalKeypairs": 100, "maxServerGroups": 10,
                "maxServerGroupMembers": 10, "maxTotalFloatingIps": -1, "maxSecurityGroups": -1,
                "maxSecurityGroupRules": -1, "totalRAMUsed": 81_920, "totalCoresUsed": 40,
                "totalInstancesUsed": 20, "totalFloatingIpsUsed": 0,
                "totalSecurityGroupsUsed": 0, "totalServerGroupsUsed": 0}}});
            (id, serde_json::to_vec(&doc).unwrap())
        })
        .collect();
    let images: Vec<Value> = (0..40)
        .map(|n| {
            json!({"id": uuid(7, n), "name": format!("ubuntu-22.04-cuda-12.{}", n % 5),
            "status": "active", "visibility": if n % 4 == 0 { "private" } else { "public" },
            "owner": project_id(n), "os_distro": "ubuntu", "os_version": "22.04",
            "architecture": "x86_64", "gpu_driver_version": "535.104.05",
            "cuda_version": format!("12.{}", n % 5), "container_format": "bare",
            "disk_format": "qcow2", "min_disk": 0, "min_ram": 0, "protected": false,
            "tags": [], "size": 2_143_027_200u64, "created_at": "2026-10-01T00:00:00Z",
            "updated_at": "2026-10-01T00:00:00Z", "schema": "/v2/schemas/image"})
        })
        .collect();
    Responses {
        flavor_pages: paginate("flavors", &flavors),
        server_pages: paginate("servers", &server_values),
        projects: projects_doc,
        provider_list,
        provider_docs: docs,
        flavor_access,
        quotas,
        images: serde_json::to_vec(&json!({"images": images, "first": "/v2/images?limit=1000",
            "schema": "/v2/schemas/images"}))
        .unwrap(),
    }
}

fn config() -> OpenstackConfig {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let source = concat!(
        r#"
[[openstack]]
id = "cloud"
"#,
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../provider/tests/fixtures/openstack/devices.toml"
        ))
    );
    toml::from_str::<File>(source).unwrap().openstack.remove(0)
}

#[derive(Deserialize)]
struct ProjectsPage {
    projects: Vec<Project>,
}
#[derive(Deserialize)]
struct ProviderList {
    resource_providers: Vec<ResourceProvider>,
}
#[derive(Deserialize)]
struct Access {
    flavor_access: Vec<FlavorAccess>,
}
#[derive(Deserialize)]
struct Limits {
    limits: AbsoluteLimits,
}
#[derive(Deserialize)]
struct AbsoluteLimits {
    absolute: ProjectQuota,
}
#[derive(Deserialize)]
struct Images {
    images: Vec<GlanceImage>,
}

/// Reads the meter's responses as the client does.
fn read_meter_state(r: &Responses) -> CloudState {
    let mut flavors: Vec<Flavor> = Vec::new();
    for page in &r.flavor_pages {
        flavors.extend(read_nova_page::<Flavor>(page).unwrap().items);
    }
    let mut servers: Vec<Server> = Vec::new();
    for page in &r.server_pages {
        servers.extend(read_nova_page::<Server>(page).unwrap().items);
    }
    let projects: ProjectsPage = serde_json::from_slice(&r.projects).unwrap();
    CloudState {
        compute_url: "http://127.0.0.1:8774/v2.1".into(),
        compute_microversion: Some("2.93".into()),
        flavors,
        projects: projects.projects,
        servers,
        providers: read_providers(r),
        ..CloudState::default()
    }
}

/// Placement's providers with their inventories, usages and traits, as the client reads them.
fn read_providers(r: &Responses) -> Vec<(ResourceProvider, ProviderState)> {
    let list: ProviderList = serde_json::from_slice(&r.provider_list).unwrap();
    list.resource_providers
        .into_iter()
        .zip(&r.provider_docs)
        .map(|(rp, (inventories, usages, traits))| {
            let mut provider = ProviderState {
                inventories: serde_json::from_slice::<Inventories>(inventories)
                    .unwrap()
                    .inventories,
                ..ProviderState::default()
            };
            if let Some(usages) = usages {
                provider.usages = serde_json::from_slice::<Usages>(usages).unwrap().usages;
            }
            if let Some(traits) = traits {
                provider.traits = serde_json::from_slice::<Traits>(traits).unwrap().traits;
            }
            (rp, provider)
        })
        .collect()
}

/// Reads every response as the client does.
fn read_state(r: &Responses) -> CloudState {
    let mut state = read_meter_state(r);
    for (id, doc) in &r.flavor_access {
        let access: Access = serde_json::from_slice(doc).unwrap();
        state.flavor_access.insert(
            id.clone(),
            access
                .flavor_access
                .into_iter()
                .map(|a| a.tenant_id)
                .collect(),
        );
    }
    for (id, doc) in &r.quotas {
        let limits: Limits = serde_json::from_slice(doc).unwrap();
        state.quotas.insert(id.clone(), limits.limits.absolute);
    }
    state.images = serde_json::from_slice::<Images>(&r.images).unwrap().images;
    state
}

fn floor<'a>(documents: impl Iterator<Item = &'a [u8]>) -> (Duration, Duration) {
    let started = Instant::now();
    let cpu = cpu_time();
    for document in documents {
        serde_json::from_slice::<IgnoredAny>(document).unwrap();
    }
    (started.elapsed(), cpu_time() - cpu)
}

/// CPU time of this thread so far (`/proc/thread-self/schedstat`, nanoseconds on a CPU): unlike
/// wall time it does not count the time other processes held the CPU, so on a shared machine its
/// ratios are steadier. Zero where the file is missing.
fn cpu_time() -> Duration {
    let nanos = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    Duration::from_nanos(nanos)
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 6, 0, 0).unwrap()
}

/// The meter's work after reading: `map_usage`, observations, monthly records. Returns the VMs'
/// usage, the number of records and the time spent in `records_for` (the accounting side), wall
/// and CPU.
fn meter(
    config: &OpenstackConfig,
    state: &CloudState,
) -> (Vec<VmUsage>, usize, Duration, Duration) {
    let (usage, map_warnings) = map_usage(config, state);
    assert!(map_warnings.is_empty(), "{map_warnings:?}");
    let site = SiteName::new("BENCH-CLOUD").unwrap();
    let since = Utc.with_ymd_and_hms(2026, 10, 1, 0, 0, 0).unwrap();
    let (found, warnings) = observations(&site, &usage, since, now());
    assert!(warnings.is_empty(), "{warnings:?}");
    let started = Instant::now();
    let cpu = cpu_time();
    let mut records = 0;
    for observation in &found {
        records += records_for(observation, now()).unwrap().len();
    }
    (usage, records, started.elapsed(), cpu_time() - cpu)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test` runs the check.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        openstack_large_cloud_benchmark();
    } else {
        a_tenth_of_the_generated_cloud_says_what_the_benchmark_claims();
        println!(
            "openstack_scale: the generated cloud checks out (run the benchmark with cargo bench)"
        );
    }
}

fn a_tenth_of_the_generated_cloud_says_what_the_benchmark_claims() {
    let servers = SERVERS / 10;
    let responses = generate(servers);
    assert_eq!(responses.server_pages.len(), servers / PAGE);
    let state = read_state(&responses);
    assert_eq!(state.servers.len(), servers, "pagination lost no server");
    assert_eq!(state.flavors.len(), FLAVORS);
    let mapped = map(&config(), &state);
    assert!(mapped.warnings.is_empty(), "{:?}", mapped.warnings);
    let manager: BTreeMap<&str, _> = mapped
        .service
        .manager
        .accelerators
        .iter()
        .map(|a| (a.local_id.as_str(), a.capacity))
        .collect();
    let v100 = manager["tesla-v100-pcie-16gb.passthrough"];
    assert_eq!(v100.total.get(), (V100_HOSTS * GPUS_PER_HOST) as f64);
    let vgpu = manager["nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c"];
    assert_eq!(
        vgpu.total.get(),
        (A100_HOSTS * GPUS_PER_HOST) as f64 * VGPUS_PER_GPU as f64
    );
    // every project is a VO share, every GPU flavor is published once
    assert_eq!(mapped.service.shares.len(), PROJECTS);
    let gpu_flavors = mapped
        .service
        .instance_types
        .iter()
        .filter(|t| t.accelerator.is_some())
        .count();
    assert_eq!(gpu_flavors, 400);
    // GPU VMs: a server on a CPU flavor (every fifth flavor) holds none
    let gpu_servers = (0..servers).filter(|n| (n * 7) % FLAVORS % 5 != 4).count();
    assert_eq!(mapped.usage.len(), gpu_servers);
    let (usage, records, _, _) = meter(&config(), &state);
    assert_eq!(
        usage, mapped.usage,
        "the meter's pass finds what the provider's does"
    );
    assert!(records >= gpu_servers);
}

fn openstack_large_cloud_benchmark() {
    let generating = Instant::now();
    let responses = generate(SERVERS);
    let bytes = responses.bytes();
    let meter_bytes: usize = responses.meter_documents().map(<[u8]>::len).sum();
    eprintln!(
        "generated {} servers, {} flavors, {} resource providers, {} projects: {:.1} MB of responses ({:.1} MB for the meter) in {:.1?}",
        SERVERS,
        FLAVORS,
        responses.provider_docs.len(),
        PROJECTS,
        bytes as f64 / 1e6,
        meter_bytes as f64 / 1e6,
        generating.elapsed()
    );
    let config = config();
    let rounds = 3;
    let mut provide_ratios = Vec::new();
    let mut meter_ratios = Vec::new();
    for round in 1..=rounds {
        let (floor_all, floor_all_cpu) = floor(responses.all_documents());
        let started = Instant::now();
        let cpu = cpu_time();
        let state = read_state(&responses);
        let read = started.elapsed();
        let mapped = map(&config, &state);
        let provide = started.elapsed();
        let provide_cpu = cpu_time() - cpu;
        assert_eq!(mapped.service.shares.len(), PROJECTS);
        drop(mapped);
        drop(state);

        let (floor_meter, floor_meter_cpu) = floor(responses.meter_documents());
        let started = Instant::now();
        let cpu = cpu_time();
        let state = read_meter_state(&responses);
        let meter_read = started.elapsed();
        let (usage, records, recording, recording_cpu) = meter(&config, &state);
        let metered = started.elapsed();
        let metered_cpu = cpu_time() - cpu;
        drop(state);
        let ratio_provide = provide.as_secs_f64() / floor_all.as_secs_f64();
        let ratio_meter = (metered - recording).as_secs_f64() / floor_meter.as_secs_f64();
        let ratio_records = metered.as_secs_f64() / floor_meter.as_secs_f64();
        let cpu_ratio = |spent: Duration, floor: Duration| {
            spent.as_secs_f64() / floor.as_secs_f64().max(f64::MIN_POSITIVE)
        };
        eprintln!(
            "round {round}: provide: floor {floor_all:.3?}, read {read:.3?}, read + map {provide:.3?} = {ratio_provide:.2}x | meter: floor {floor_meter:.3?}, read {meter_read:.3?}, read + map + observations {:.3?} = {ratio_meter:.2}x; + {records} records {metered:.3?} = {ratio_records:.2}x ({} GPU VMs)",
            metered - recording,
            usage.len()
        );
        eprintln!(
            "round {round}, CPU time: provide {provide_cpu:.3?} / floor {floor_all_cpu:.3?} = {:.2}x | meter {:.3?} / floor {floor_meter_cpu:.3?} = {:.2}x",
            cpu_ratio(provide_cpu, floor_all_cpu),
            metered_cpu - recording_cpu,
            cpu_ratio(metered_cpu - recording_cpu, floor_meter_cpu),
        );
        provide_ratios.push(ratio_provide);
        meter_ratios.push(ratio_meter);
    }
    eprintln!("peak resident memory: {} MB", peak_rss_kib() / 1024);
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    // Issue 6's bound, on the best of the rounds (a round can be slowed by the machine, not by
    // the code): each within 2x of the floor (BENCHMARKS.md).
    assert!(best(&provide_ratios) <= 2.0, "provide {provide_ratios:?}");
    assert!(best(&meter_ratios) <= 2.0, "meter {meter_ratios:?}");
}
