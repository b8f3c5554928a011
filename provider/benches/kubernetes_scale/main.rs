//! The scale benchmark of issue 7: a generated cluster of 5,000 GPU nodes and 150,000 pods (each
//! pod about 4 KB of JSON as the API returns it, without managedFields), read in pages of 500.
//!
//! A `cargo bench` target without a harness (figures in BENCHMARKS.md, `## Kubernetes`):
//!
//! ```text
//! cargo bench --workspace --locked --bench kubernetes_scale
//! ```
//!
//! Per page it times the floor, `serde_json` reading the page's bytes into
//! `serde::de::IgnoredAny` (the least any reader of that text must do), and the mapping, the
//! client's own [`read_page`] with `read_node`, and `PodsRead::read_page` (`read_pod` and each
//! pod's CPU request), exactly as a listing runs them; then the
//! GLUE2 mapping and the meter's observations of the whole inventory are added to the mapping.
//! Pages are generated to a temporary folder first (not timed), then read back one at a time and
//! dropped, as the client drops each page's text, so the process's peak memory (`VmHWM`) is what a
//! listing of this size costs (plus the generator's one page).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use serde::de::IgnoredAny;
use serde_json::json;

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::{
    Inventory, PodsRead, api::Namespace, api::Node, api::ResourceQuota, observe_inventory,
    read_node, read_page, service,
};
use accelfed_schemas::names::SiteName;

mod cluster;

use cluster::{node, pages_of, pod};

const NODES: usize = 5_000;
const PODS: usize = 150_000;
const PAGE: usize = 500;
const GPUS_PER_NODE: usize = 8;
const NAMESPACES: usize = 200;

/// Peak resident memory of this process, from `/proc/self/status`.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb / 1024.0
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test --benches` only builds it.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        scale_5000_nodes_150000_pods_in_pages_of_500();
    }
}

fn scale_5000_nodes_150000_pods_in_pages_of_500() {
    let mut floor = Duration::ZERO;
    let mut mapping = Duration::ZERO;
    let mut node_listing = Duration::ZERO;
    let mut bytes = 0_usize;
    let mut pod_bytes = 0_usize;
    let mut inventory = Inventory::default();
    let mut pods_read = PodsRead::default();
    let tolerated = vec!["nvidia.com/gpu".to_owned()];

    // Generate every page to disk first: building pages as `serde_json::Value`s between the timed
    // reads leaves glibc's allocator with millions of freed fragments, which slows the mapping's
    // allocations down by an order of magnitude; the real client (one text per page) never sees
    // that.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (index, text) in pages_of("NodeList", NODES, node).enumerate() {
        let path = dir.path().join(format!("nodes-{index:04}.json"));
        std::fs::write(&path, text).unwrap();
        files.push(("nodes", path));
    }
    for (index, text) in pages_of("PodList", PODS, pod).enumerate() {
        let path = dir.path().join(format!("pods-{index:04}.json"));
        std::fs::write(&path, text).unwrap();
        files.push(("pods", path));
    }

    let mut read_n =
        |node: Node, warnings: &mut Vec<String>| read_node(&node, &tolerated, warnings);
    for (kind, path) in &files {
        // The text of one page, as the client holds it once the response arrived.
        let text = std::fs::read_to_string(path).unwrap();
        bytes += text.len();
        let t = Instant::now();
        serde_json::from_str::<IgnoredAny>(&text).unwrap();
        floor += t.elapsed();
        let t = Instant::now();
        if *kind == "nodes" {
            read_page(
                &text,
                &mut read_n,
                &mut inventory.nodes,
                &mut inventory.warnings,
            )
            .unwrap();
        } else {
            pod_bytes += text.len();
            let next = pods_read.read_page(&text, &mut inventory.warnings).unwrap();
            assert_eq!(next.is_some(), pods_read.gpu_pods.len() < PODS);
        }
        let took = t.elapsed();
        mapping += took;
        if *kind == "nodes" {
            node_listing += took;
        }
    }
    inventory.pods = pods_read.gpu_pods;
    inventory.cpu = pods_read.cpu;
    let namespaces: String = json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": {},
        "items": (0..NAMESPACES).map(|i| json!({"metadata": {"name": format!("vo-{i:03}"),
            "labels": {"accelfed.io/vo": format!("vo{i}.example.org")}}})).collect::<Vec<_>>()})
    .to_string();
    let quotas: String = json!({"kind": "ResourceQuotaList", "apiVersion": "v1", "metadata": {},
        "items": (0..NAMESPACES).map(|i| json!({"metadata": {"name": "gpu", "namespace": format!("vo-{i:03}")},
            "spec": {"hard": {"requests.nvidia.com/gpu": "400"}}})).collect::<Vec<_>>()})
    .to_string();
    for text in [&namespaces, &quotas] {
        bytes += text.len();
        let t = Instant::now();
        serde_json::from_str::<IgnoredAny>(text).unwrap();
        floor += t.elapsed();
    }
    let t = Instant::now();
    read_page(
        &namespaces,
        &mut |ns: Namespace, _: &mut Vec<String>| Some(ns),
        &mut inventory.namespaces,
        &mut Vec::new(),
    )
    .unwrap();
    read_page(
        &quotas,
        &mut |q: ResourceQuota, _: &mut Vec<String>| Some(q),
        &mut inventory.quotas,
        &mut Vec::new(),
    )
    .unwrap();
    let listing = mapping + t.elapsed();

    let config = Config::parse(
        std::path::Path::new("bench.toml"),
        "[site]\nname = \"BENCH\"\n[[kubernetes]]\nid = \"k8s\"\nvo_label = \"accelfed.io/vo\"\n",
    )
    .unwrap();
    let kubernetes = &config.kubernetes[0];
    let t = Instant::now();
    let mapped = service(kubernetes, &inventory);
    let glue = t.elapsed();
    let t = Instant::now();
    let site = SiteName::new("BENCH").unwrap();
    let now = Utc.with_ymd_and_hms(2024, 5, 1, 14, 0, 0).unwrap();
    let metered = observe_inventory(
        kubernetes,
        &site,
        &inventory,
        None,
        now - chrono::Duration::hours(24),
        now,
    );
    let meter = t.elapsed();
    let mapping = listing + glue + meter;
    let peak = peak_rss_mb();

    let ratio = mapping.as_secs_f64() / floor.as_secs_f64();
    let provide_ratio = (listing + glue).as_secs_f64() / floor.as_secs_f64();
    let meter_ratio = (listing + meter).as_secs_f64() / floor.as_secs_f64();
    println!(
        "kubernetes scale: {NODES} nodes, {PODS} pods ({:.0} bytes of JSON per pod), {:.0} MB in pages of {PAGE}\n\
         floor (serde_json -> IgnoredAny): {:.3} s\n\
         mapping: {:.3} s = listing {:.3} s (nodes {:.3} s) + GLUE2 {:.3} s + meter {:.3} s; {ratio:.2}x the floor\n\
         provide (listing + GLUE2): {provide_ratio:.2}x the floor; meter (listing + observations): {meter_ratio:.2}x\n\
         peak memory (VmHWM): {peak:.0} MB; {} GPU nodes, {} GPU pods, {} observations, {} warnings",
        pod_bytes as f64 / PODS as f64,
        bytes as f64 / 1e6,
        floor.as_secs_f64(),
        mapping.as_secs_f64(),
        listing.as_secs_f64(),
        node_listing.as_secs_f64(),
        glue.as_secs_f64(),
        meter.as_secs_f64(),
        inventory.nodes.len(),
        inventory.pods.len(),
        metered.observations.len(),
        mapped.warnings.len() + metered.warnings.len(),
    );
    assert_eq!(inventory.nodes.len(), NODES);
    assert_eq!(inventory.pods.len(), PODS);
    assert!(
        mapped.warnings.is_empty(),
        "{:?}",
        &mapped.warnings[..3.min(mapped.warnings.len())]
    );
    // Every running pod, and every finished one (08:00 - 09:30) inside the last 24 hours.
    assert_eq!(metered.observations.len(), PODS);
    let used: u64 = mapped.totals.values().map(|c| c.used.get() as u64).sum();
    assert_eq!(used, (NODES * GPUS_PER_NODE) as u64);
    // Issue 7 asks for each command's mapping within 2x of the floor. Measured on the 2-core
    // build machine: provide 1.87x to 2.02x, meter 1.98x to 2.41x (BENCHMARKS.md), so the bound is
    // not reliably met yet; this guards against regressions past that.
    assert!(
        provide_ratio < 2.5 && meter_ratio < 2.5,
        "provide {provide_ratio:.2}x, meter {meter_ratio:.2}x the floor"
    );
    assert!(peak < 500.0, "peak memory {peak:.0} MB");
}
