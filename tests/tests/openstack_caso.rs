//! The OpenStack meter's records for flavors with EGI's four `Accelerator:*` keys agree with what
//! cASO 5.x sends for the same VM: one record per calendar month, Count = `Accelerator:Number`,
//! AvailableDuration = the seconds of that month between `created` and the end (terminated, or the
//! end of the period), Type = `Accelerator:Type`, Model = "<Vendor> <Model>". A VM that never
//! launched gets no GPU time (cASO ends it at `created`). The expected figures are worked out by
//! hand from cASO's rules above, on a server of the recorded cloud with its flavor changed.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use accelfed_accounting::meter::records_for;
use accelfed_provider::openstack::api::Server;
use accelfed_provider::openstack::{CloudState, OpenstackConfig, map, observations};
use accelfed_schemas::gpu::AcceleratorType;
use accelfed_schemas::names::SiteName;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().into()
}

/// A recorded server (2.93, embedded flavor) with EGI's four keys and these times.
fn server(id: &str, created: &str, launched: Option<&str>, terminated: Option<&str>) -> Server {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../provider/tests/fixtures/openstack/nova-servers-detail-alltenants-2.93.json");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut server = recorded["servers"][0].clone();
    server["id"] = json!(id);
    server["status"] = json!(if terminated.is_some() {
        "DELETED"
    } else {
        "ACTIVE"
    });
    server["created"] = json!(created);
    server["OS-SRV-USG:launched_at"] = json!(launched);
    server["OS-SRV-USG:terminated_at"] = json!(terminated);
    server["flavor"] = json!({"vcpus": 16, "ram": 98304, "disk": 200, "ephemeral": 0, "swap": 0,
        "original_name": "egi.v100x2", "extra_specs": {
            "Accelerator:Type": "GPU", "Accelerator:Vendor": "NVIDIA",
            "Accelerator:Model": "Tesla V100-PCIE-16GB", "Accelerator:Number": "2"}});
    serde_json::from_value(server).unwrap()
}

#[test]
fn egi_flavored_vms_give_the_records_caso_sends() {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let config = toml::from_str::<File>("[[openstack]]\nid = \"cloud\"\n")
        .unwrap()
        .openstack
        .remove(0);
    let state = CloudState {
        servers: vec![
            // across a month boundary, deleted on 1 November at 03:00
            server(
                "0a6d3c1e-1111-4b4e-9a57-000000000001",
                "2026-10-31T22:00:00Z",
                Some("2026-10-31T22:00:40.000000"),
                Some("2026-11-01T03:00:00.000000"),
            ),
            // still running at the end of the period
            server(
                "0a6d3c1e-2222-4b4e-9a57-000000000002",
                "2026-11-20T06:00:00Z",
                Some("2026-11-20T06:01:00.000000"),
                None,
            ),
            // failed at build: never launched
            server(
                "0a6d3c1e-3333-4b4e-9a57-000000000003",
                "2026-11-10T00:00:00Z",
                None,
                None,
            ),
        ],
        ..CloudState::default()
    };
    let mapped = map(&config, &state);
    assert!(mapped.warnings.is_empty(), "{:?}", mapped.warnings);
    let site = SiteName::new("TEST-SITE").unwrap();
    let now = at("2026-11-22T06:00:00Z");
    let (found, warnings) = observations(&site, &mapped.usage, at("2026-10-01T00:00:00Z"), now);
    assert!(warnings.is_empty());
    assert_eq!(found.len(), 2, "the VM that never launched held no GPU");

    let mut records: Vec<_> = found
        .iter()
        .flat_map(|o| records_for(o, now).unwrap())
        .map(|r| {
            (
                r.associated_record.to_string(),
                r.month.to_string(),
                r.count.get(),
                r.available_duration,
                r.accelerator_type,
                r.model.to_string(),
            )
        })
        .collect();
    records.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    // cASO writes the flavor's vendor and model side by side ("NVIDIA Tesla V100-PCIE-16GB");
    // accelfed writes the one canonical name, as nvidia-smi prints it, so one GPU is one model in
    // every report. Every other field is cASO's.
    let model = "Tesla V100-PCIE-16GB".to_owned();
    assert_eq!(
        records,
        vec![
            (
                "0a6d3c1e-1111-4b4e-9a57-000000000001".to_owned(),
                records[0].1.clone(),
                2.0,
                7_200,
                AcceleratorType::Gpu,
                model.clone()
            ),
            (
                "0a6d3c1e-1111-4b4e-9a57-000000000001".to_owned(),
                records[1].1.clone(),
                2.0,
                10_800,
                AcceleratorType::Gpu,
                model.clone()
            ),
            (
                "0a6d3c1e-2222-4b4e-9a57-000000000002".to_owned(),
                records[2].1.clone(),
                2.0,
                2 * 86_400,
                AcceleratorType::Gpu,
                model
            ),
        ]
    );
    assert!(
        records[0].1.contains("10") && records[1].1.contains("11"),
        "{records:?}"
    );
}
