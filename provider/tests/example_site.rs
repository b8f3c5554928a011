//! The shipped example configuration parses, validates and yields the GPUs it describes.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use accelfed_provider::config::Config;
use accelfed_provider::gather;
use accelfed_schemas::glue::Service;
use accelfed_schemas::gpu::GpuCount;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn example() -> accelfed_schemas::glue::SiteSnapshot {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let loaded = Config::load(&path).unwrap_or_else(|err| panic!("{err}"));
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-01T12:00:00Z")
        .unwrap()
        .to_utc();
    block_on(gather(&loaded.config, now)).unwrap().snapshot
}

#[test]
fn the_example_site_has_the_gpus_its_comments_describe() {
    let snapshot = example();
    let Service::Computing(hpc) = &snapshot.services[0] else {
        panic!("first service is the cluster")
    };
    let totals: Vec<(String, String, String, String)> = hpc
        .manager
        .accelerators
        .iter()
        .map(|a| {
            let c = a.capacity;
            (
                a.local_id.to_string(),
                c.total.to_string(),
                c.used.to_string(),
                c.free.to_string(),
            )
        })
        .collect();
    assert_eq!(
        totals,
        vec![
            // 8 nodes x 4, one node (4 GPUs) drained, 18 used: 10 free.
            (
                "nvidia-a100-sxm4-80gb.none".into(),
                "32".into(),
                "18".into(),
                "10".into()
            ),
            // One node x 8 GPUs x 7 slices, 20 used.
            (
                "nvidia-h100-80gb-hbm3.mig.1g.10gb".into(),
                "56".into(),
                "20".into(),
                "36".into()
            ),
            // 4 nodes x 8, 12 used.
            (
                "nvidia-h100-80gb-hbm3.none".into(),
                "32".into(),
                "12".into(),
                "20".into()
            ),
        ]
    );
    let mig_share = hpc
        .shares
        .iter()
        .find(|s| s.local_id.as_str() == "gpu-small")
        .unwrap();
    assert_eq!(mig_share.accelerators[0].capacity.free, GpuCount::whole(36));
    // The 56 slices are 1 of 7 each: 8 physical GPUs, 36 free slices are 36/7 of them.
    let mig = &hpc.manager.accelerators[1];
    assert_eq!(mig.physical().total, GpuCount::whole(8));
    assert!((mig.physical().free.get() - 36.0 / 7.0).abs() < 1e-9);
    assert_eq!(
        snapshot.physical_totals().get("NVIDIA H100 80GB HBM3"),
        Some(&GpuCount::whole(40))
    );
    assert_eq!(
        mig_share.accelerators[0].max_per_job,
        Some(GpuCount::whole(2))
    );

    let Service::Cloud(cloud) = &snapshot.services[1] else {
        panic!("second service is the cloud")
    };
    let pool = cloud.manager.accelerators[0].capacity;
    assert_eq!(
        (pool.total, pool.used, pool.free),
        (GpuCount::whole(16), GpuCount::whole(6), GpuCount::whole(8))
    );
    // biomed: quota 4, uses 2, so 2 more can be had although the pool has 8 free.
    let biomed = cloud
        .shares
        .iter()
        .find(|s| s.local_id.as_str() == "biomed")
        .unwrap();
    assert_eq!(biomed.accelerators[0].capacity.free, GpuCount::whole(2));
    // The 4-GPU flavor is atlas's only.
    let large = cloud
        .instance_types
        .iter()
        .find(|f| f.name.as_str() == "g1.a100x4")
        .unwrap();
    assert_eq!(
        large.shares.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        ["atlas"]
    );
    // Job slots are CPUs: the a100 share's 8 nodes of 128, 5 busy and 1 unavailable; the MIG
    // node's 192, busy.
    let slots = |share: &str| {
        let share = hpc
            .shares
            .iter()
            .find(|s| s.local_id.as_str() == share)
            .unwrap()
            .slots;
        (share.free, share.used, share.max_per_job)
    };
    assert_eq!(slots("gpu"), (Some(2 * 128), Some(5 * 128), Some(8 * 128)));
    assert_eq!(slots("gpu-small"), (Some(0), Some(192), Some(192)));
    snapshot.validate().unwrap();
}

#[test]
fn every_service_carries_the_gocdb_id() {
    let snapshot = example();
    for entity in snapshot.entities() {
        if entity.class.name().ends_with("Service") {
            assert!(
                entity
                    .other_info
                    .contains(&("gocdb_id".into(), "1234G0".into())),
                "{}",
                entity.id
            );
        }
    }
}

/// The example's GLUE 2.1 JSON is what the shipped JSON Schema describes, and no ID repeats.
#[test]
fn the_example_renders_json_that_the_shipped_schema_accepts() {
    let snapshot = example();
    let bytes = accelfed_schemas::render::json::render(&snapshot);
    let document: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/json/glue21.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let violations: Vec<String> = validator
        .iter_errors(&document)
        .map(|error| format!("{}: {error}", error.instance_path))
        .collect();
    assert_eq!(violations, Vec::<String>::new());

    let mut ids: Vec<&str> = Vec::new();
    for entities in document.as_object().unwrap().values() {
        match entities {
            serde_json::Value::Array(list) => {
                ids.extend(list.iter().map(|e| e["ID"].as_str().unwrap()))
            }
            single => ids.push(single["ID"].as_str().unwrap()),
        }
    }
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "an ID appears twice");
    assert!(count > 40, "the example renders {count} entities");
}
