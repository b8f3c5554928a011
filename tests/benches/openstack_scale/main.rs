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

mod cloud;

use cloud::*;

const FLAVORS: usize = 500;
const V100_HOSTS: usize = 200;
const A100_HOSTS: usize = 50;
const GPUS_PER_HOST: usize = 8;
const VGPUS_PER_GPU: u64 = 8;
const PROJECTS: usize = 50;
const SERVERS: usize = 100_000;
const PAGE: usize = 1_000;

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
