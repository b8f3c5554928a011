//! The agent against the stub NVML library (testkit's `nvml_stub`, built with `cc` here): the
//! calls, struct layouts and return codes of nvml.h, the values of the captured H200 and H100
//! (shared/reference/gpu-captures/). No NVIDIA driver is needed, and none is used.

use std::path::{Path, PathBuf};
use std::time::Duration;

use accelfed_agent::holder::Holder;
use accelfed_agent::idle::Activity;
use accelfed_agent::ledger::{Entry, Ledger, entry_key};
use accelfed_agent::{Agent, AgentConfig, AgentError};
use accelfed_testkit::nvml_stub::{
    self, BUSY_H200, IDLE_ALLOCATED_H200, MIG_H100, POWER_MW, VGPU_H100, VGPU_VMS,
};

const WINDOW: Duration = Duration::from_millis(250);

struct Node {
    dir: tempfile::TempDir,
    library: PathBuf,
}

fn node() -> Node {
    let dir = tempfile::tempdir().expect("temp dir");
    let library = nvml_stub::build(dir.path()).expect("stub NVML built");
    let proc_root = dir.path().join("proc");
    nvml_stub::write_cgroups(&proc_root, &nvml_stub::STUB_CGROUPS).expect("fake /proc");
    Node { dir, library }
}

fn config(node: &Node) -> AgentConfig {
    let mut config = AgentConfig::new(node.dir.path().join("state.json"));
    config.library = Some(node.library.clone());
    config.proc_root = node.dir.path().join("proc");
    config.period = WINDOW;
    config
}

/// Opens an agent and reads `windows` + 1 times, `WINDOW` apart.
fn run_windows(config: AgentConfig, windows: usize) -> Agent {
    let mut agent = Agent::open(config).expect("agent opens the stub");
    agent.tick().expect("first reading");
    for _ in 0..windows {
        std::thread::sleep(WINDOW);
        agent.tick().expect("reading");
    }
    agent
}

fn entry<'a>(ledger: &'a Ledger, holder: &Holder, place: &str) -> &'a Entry {
    ledger
        .entries
        .get(&entry_key(holder, place))
        .unwrap_or_else(|| {
            panic!(
                "no entry for {holder} on {place}: {:?}",
                ledger.entries.keys()
            )
        })
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

#[test]
fn identities_mig_and_vgpu_instances_are_found() {
    let node = node();
    let mut agent = Agent::open(config(&node)).expect("agent opens the stub");
    let readings = agent.tick().expect("reading");
    let uuids: Vec<&str> = readings.iter().map(|r| r.identity.uuid.as_str()).collect();
    assert_eq!(uuids, [IDLE_ALLOCATED_H200, BUSY_H200, MIG_H100, VGPU_H100]);
    let models: Vec<&str> = readings.iter().map(|r| r.identity.model.as_str()).collect();
    assert_eq!(
        models,
        [
            "NVIDIA H200",
            "NVIDIA H200",
            "NVIDIA H100 80GB HBM3",
            "NVIDIA H100 80GB HBM3"
        ]
    );
    // The H200's memory as NVML gave it in the capture (150754820096 bytes, 143,771 MiB).
    assert_eq!(
        readings[0].identity.memory_total_bytes,
        Some(150_754_820_096)
    );
    assert_eq!(readings[0].power_mw, Some(122_090));
    assert_eq!(readings[1].utilisation_percent, Some(100));

    let mig = &readings[2].identity;
    assert_eq!(mig.mig_mode, Some(true));
    assert_eq!(
        readings[2].utilisation_percent, None,
        "NVML gives no utilisation in MIG mode"
    );
    let instances: Vec<(&str, Option<u32>)> = mig
        .mig_instances
        .iter()
        .map(|m| (m.name.as_str(), m.gpu_instance_id))
        .collect();
    assert_eq!(
        instances,
        [
            ("NVIDIA H100 80GB HBM3 MIG 3g.40gb", Some(1)),
            ("NVIDIA H100 80GB HBM3 MIG 3g.40gb", Some(2))
        ]
    );
    assert!(mig.mig_instances.iter().all(|m| m.uuid.starts_with("MIG-")));

    let vgpus = &readings[3].identity.vgpu_instances;
    let vms: Vec<Holder> = vgpus.iter().map(|v| v.vm.clone()).collect();
    assert_eq!(vms, VGPU_VMS.map(|vm| Holder::Vm(vm.to_owned())));
    assert_eq!(readings[0].identity.mig_mode, Some(false));
    assert!(
        readings[0].identity.vgpu_instances.is_empty(),
        "bare metal answers NOT_SUPPORTED for vGPUs"
    );
}

#[test]
fn idle_but_allocated_holder_is_its_job_and_idle_the_busy_one_active() {
    let node = node();
    let agent = run_windows(config(&node), 3);
    let ledger = agent.ledger();

    // GPU 0: the captured idle holder (smUtil 0), in Slurm job 4242 (cgroup v2).
    let held = entry(
        ledger,
        &Holder::SlurmJob("4242".into()),
        IDLE_ALLOCATED_H200,
    );
    assert!(
        held.held_seconds >= 3.0 * WINDOW.as_secs_f64() * 0.9,
        "{held:?}"
    );
    assert_eq!(held.idle_seconds, held.held_seconds, "{held:?}");
    assert_eq!(held.active_seconds, 0.0);
    assert_eq!(held.last_activity, Activity::Idle);
    assert_eq!(
        held.idle_since_ms,
        Some(held.first_seen_ms),
        "idle since it was first seen"
    );

    // GPU 1: job 4243 (cgroup v1) holds memory and is absent from the samples: idle. The pod
    // (systemd naming) runs at smUtil 100: active.
    let absent = entry(ledger, &Holder::SlurmJob("4243".into()), BUSY_H200);
    assert!(absent.held_seconds > 0.0);
    assert_eq!(absent.idle_seconds, absent.held_seconds);
    let busy = entry(
        ledger,
        &Holder::KubernetesPod("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0".into()),
        BUSY_H200,
    );
    assert_eq!(busy.active_seconds, busy.held_seconds);
    assert!(busy.active_seconds > 0.0);
    assert_eq!(busy.idle_since_ms, None);

    // GPU 2 (MIG): GPM's activity from the second window on; the first window's is unknown.
    let mig_busy = ledger
        .entries
        .values()
        .find(|e| e.holder == Holder::KubernetesPod("7c6b5a49-3827-1605-f4e3-d2c1b0a99887".into()))
        .expect("MIG pod (cgroupfs naming)");
    assert!(
        mig_busy.active_seconds > 0.0 && mig_busy.idle_seconds == 0.0,
        "{mig_busy:?}"
    );
    assert!(mig_busy.place.starts_with("MIG-"));
    let mig_idle = ledger
        .entries
        .values()
        .find(|e| e.holder == Holder::Process(6002))
        .expect("MIG process outside any job");
    assert!(
        mig_idle.idle_seconds > 0.0 && mig_idle.active_seconds == 0.0,
        "{mig_idle:?}"
    );

    // GPU 3 (two vGPUs): no source tells each VM's activity: held, unknown, never guessed.
    for vm in VGPU_VMS {
        let vm_entry = ledger
            .entries
            .values()
            .find(|e| e.holder == Holder::Vm(vm.into()))
            .expect("VM holder");
        assert_eq!(vm_entry.unknown_seconds, vm_entry.held_seconds);
        assert_eq!(vm_entry.gpu_uuid, VGPU_H100);
    }
}

#[test]
fn energy_is_the_counters_rise_shared_by_held_time() {
    let node = node();
    let agent = run_windows(config(&node), 4);
    let ledger = agent.ledger();
    for (template, uuid) in [IDLE_ALLOCATED_H200, BUSY_H200, MIG_H100, VGPU_H100]
        .into_iter()
        .enumerate()
    {
        let gpu = &ledger.gpus[uuid];
        // The stub's counter rises at the captured power; the window's ends are read in whole
        // milliseconds (one each side) and the counter in whole mJ.
        let watts = POWER_MW[template] as f64 / 1000.0;
        let expected = watts * gpu.observed_seconds;
        assert!(
            close(gpu.energy_joules, expected, watts * 0.002 + 0.002),
            "{uuid}: {} J counted, {expected} J expected",
            gpu.energy_joules
        );
        let holders: f64 = ledger
            .entries
            .values()
            .filter(|e| e.gpu_uuid == uuid)
            .map(|e| e.energy_joules)
            .sum();
        assert!(
            close(
                holders + gpu.unattributed_energy_joules,
                gpu.energy_joules,
                1e-6
            ),
            "{uuid}: shares do not add up"
        );
        assert_eq!(
            gpu.unattributed_energy_joules, 0.0,
            "every window of {uuid} had holders"
        );
    }
    // GPU 1's two holders held it for the same windows: half each.
    let shares: Vec<f64> = ledger
        .entries
        .values()
        .filter(|e| e.gpu_uuid == BUSY_H200)
        .map(|e| e.energy_joules)
        .collect();
    assert_eq!(shares.len(), 2);
    assert!(close(shares[0], shares[1], 1e-9));
    // GPU 0's one holder took all of it: 122.09 W for its held time.
    let held = entry(
        ledger,
        &Holder::SlurmJob("4242".into()),
        IDLE_ALLOCATED_H200,
    );
    assert!(
        close(
            held.energy_joules,
            122.09 * held.held_seconds,
            122.09 * 0.002 + 0.002
        ),
        "{held:?}"
    );
}

#[test]
fn a_missing_library_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = AgentConfig::new(dir.path().join("state.json"));
    let missing = dir.path().join("no-driver/libnvidia-ml.so.1");
    config.library = Some(missing.clone());
    let error = Agent::open(config).expect_err("no library there");
    assert!(
        matches!(error, AgentError::LibraryMissing { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&missing.display().to_string()) && message.contains("NVIDIA driver"),
        "{message}"
    );
    assert!(
        !Path::new(&dir.path().join("state.json")).exists(),
        "nothing written"
    );
}
