//! A batch share's job slots (GLUE2 FreeSlots, UsedSlots, MaxSlotsPerJob, which EGI's GLUE 2.0
//! profile asks of every share) counted in CPU cores from the fixture cluster, as the Slurm
//! backend counts them; the rule is in docs/configuration.md (`[[kubernetes]]`).

use accelfed_schemas::glue::{Service, ShareSlots};

use super::{Behaviour, at, config, setup};

/// The numbers, from `tests/fixtures/kubernetes/cluster/` by hand. Every node allocates 63500m
/// CPU and every container requests 4 cores.
///
/// GPU nodes taking new pods: gpu-a100-1, gpu-mig-1, gpu-t4-ts, gpu-vgpu-1, gpu-amd-1
/// (gpu-a100-2 is cordoned, gpu-a100-3 NotReady; gpu-bad-1 and cpu-1 are no GPU nodes). CPU
/// requested by their bound, unfinished pods, and the whole cores left:
/// - gpu-a100-1: train-a100-1, half-gpu-1 (its GPU quantity is unreadable, its CPU is not) and
///   no-status-1, 4 each = 12 (eval-done-1 Succeeded); 63.5 - 12 = 51.5 -> 51
/// - gpu-mig-1: mig-small-1 + mig-large-pending (bound) = 8 -> 55
/// - gpu-t4-ts: notebook-ts-1, main 4 + sidecar 4 = 8, its init peak 4 + 4 = 8 -> 55
/// - gpu-vgpu-1: vgpu-scratch-1 (namespace without a VO, still on the node) = 4 -> 59
/// - gpu-amd-1: rocm-failed-1 Failed = 0 -> 63
///
/// FreeSlots = 51 + 55 + 55 + 59 + 63 = 283 for each VO; MaxSlotsPerJob = 63 (the largest
/// node's whole cores). UsedSlots: atlas (atlas-prod, atlas-dev) = train-a100-1 4 +
/// train-cordoned-1 4 (on the cordoned node: still held) + notebook-ts-1 8 + no-status-1 4 = 20
/// (web-1 runs on cpu-1, no GPU node; queued-1 is unbound); cms = mig-small-1 4 +
/// mig-large-pending 4 + half-gpu-1 4 = 12.
#[tokio::test]
async fn batch_shares_publish_cpu_cores_as_job_slots() {
    let setup = setup(Behaviour::default()).await;
    let gathered = accelfed_provider::gather(&config(&setup, ""), at(14))
        .await
        .unwrap();
    let Service::Computing(service) = &gathered.snapshot.services[0] else {
        panic!("expected a computing service");
    };
    let slots: Vec<(&str, ShareSlots)> = service
        .shares
        .iter()
        .map(|share| (share.local_id.as_str(), share.slots))
        .collect();
    let known = |free, used, max| ShareSlots {
        free: Some(free),
        used: Some(used),
        max_per_job: Some(max),
    };
    assert_eq!(
        slots,
        [("atlas", known(283, 20, 63)), ("cms", known(283, 12, 63))]
    );

    // Both LDIF modes and the JSON carry them on the shares.
    for format in [
        accelfed_schemas::render::Format::LdifGlue20,
        accelfed_schemas::render::Format::LdifGlue21,
    ] {
        let ldif = String::from_utf8(accelfed_schemas::render::render(&gathered.snapshot, format))
            .unwrap();
        for line in [
            "GLUE2ComputingShareFreeSlots: 283",
            "GLUE2ComputingShareUsedSlots: 20",
            "GLUE2ComputingShareUsedSlots: 12",
            "GLUE2ComputingShareMaxSlotsPerJob: 63",
        ] {
            assert!(ldif.lines().any(|l| l == line), "{format}: no {line:?}");
        }
    }
    let json: serde_json::Value =
        serde_json::from_slice(&accelfed_schemas::render::json::render(&gathered.snapshot))
            .unwrap();
    let used: Vec<u64> = json["ComputingShare"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| share["UsedSlots"].as_u64().unwrap())
        .collect();
    assert_eq!(used, [20, 12]);
}
