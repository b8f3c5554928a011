//! `accelfed agent` as a process against the stub NVML library (testkit's `nvml_stub`, C built
//! with `cc` here; no NVIDIA driver needed): killed with SIGKILL and restarted, it counts every
//! second once; a missing library or driver is a clear error and exit status 1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use accelfed_testkit::nvml_stub::{self, IDLE_ALLOCATED_H200};
use accelfed_testkit::owned::OwnedProcess;
use serde_json::Value;

struct Node {
    dir: tempfile::TempDir,
}

fn node() -> Node {
    let dir = tempfile::tempdir().expect("temp dir");
    nvml_stub::build(dir.path()).expect("stub NVML built");
    nvml_stub::write_cgroups(&dir.path().join("proc"), &nvml_stub::STUB_CGROUPS)
        .expect("fake /proc");
    Node { dir }
}

fn agent_command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_accelfed"));
    command
        .arg("agent")
        .arg("--nvml-library")
        .arg(dir.join("libnvidia-ml.so.1"))
        .arg("--state")
        .arg(dir.join("state.json"))
        .arg("--proc-root")
        .arg(dir.join("proc"))
        .args(["--period", "0.2", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Starts the agent and returns it with its endpoint's address (from its first line: it binds
/// port 0 itself, so no port is reserved and released).
fn start(dir: &Path) -> (OwnedProcess, String) {
    // Its log goes to the test's own stderr: a pipe nobody reads could fill and stall it.
    let mut command = agent_command(dir);
    command.stderr(Stdio::inherit());
    let mut agent = OwnedProcess::spawn("accelfed agent", &mut command).expect("agent starts");
    let stdout = agent.child().stdout.take().expect("stdout piped");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("agent's first line");
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (agent, address)
}

fn get(address: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(address).expect("endpoint reachable");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .expect("request sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response read");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_owned()
}

/// The JSON state once the agent has counted some windows.
fn state_after(address: &str, wait: Duration) -> Value {
    std::thread::sleep(wait);
    serde_json::from_str(&get(address, "/v1/state")).expect("JSON state")
}

fn holder<'a>(state: &'a Value, kind: &str, id: &str, gpu: &str) -> &'a Value {
    state["holders"]
        .as_array()
        .expect("holders")
        .iter()
        .find(|h| h["kind"] == kind && h["id"] == id && h["gpu_uuid"] == gpu)
        .unwrap_or_else(|| panic!("no {kind} {id} on {gpu} in {state}"))
}

fn seconds(value: &Value) -> f64 {
    value.as_f64().expect("a number")
}

#[test]
fn state_survives_sigkill_and_restart_without_double_counting() {
    let node = node();
    let (mut first, address) = start(node.dir.path());
    let before = state_after(&address, Duration::from_millis(1500));
    let job = holder(&before, "slurm_job", "4242", IDLE_ALLOCATED_H200);
    let held_before = seconds(&job["held_seconds"]);
    assert!(held_before > 0.5, "{job}");
    let first_seen = job["first_seen_unix_ms"].clone();
    first.kill(); // SIGKILL: no chance to save anything more
    std::thread::sleep(Duration::from_millis(700)); // down for a while: counted once, after restart

    let (mut second, address) = start(node.dir.path());
    let after = state_after(&address, Duration::from_millis(1500));
    second.kill();
    let job = holder(&after, "slurm_job", "4242", IDLE_ALLOCATED_H200);
    assert_eq!(
        job["first_seen_unix_ms"], first_seen,
        "the holder resumed, not restarted"
    );
    let held = seconds(&job["held_seconds"]);
    assert!(
        held > held_before + 1.0,
        "counting went on: {held_before} then {held}"
    );
    // Every second from the first reading to the last counted exactly once, the time down
    // included: held time is the span, no more (double counting) and no less (lost time).
    let span = (job["last_seen_unix_ms"].as_u64().expect("ms") - first_seen.as_u64().expect("ms"))
        as f64
        / 1000.0;
    assert!(
        (held - span).abs() < 1e-6,
        "held {held} s over a span of {span} s"
    );
    assert_eq!(
        seconds(&job["idle_seconds"]),
        held,
        "the idle-but-allocated job stayed idle"
    );
    // Its energy is the GPU's at the captured 122.09 W over that span (counter read in ms and mJ).
    let energy = seconds(&job["energy_joules"]);
    assert!(
        (energy - 122.09 * span).abs() < 122.09 * 0.002 + 0.002,
        "{energy} J over {span} s"
    );
}

#[test]
fn the_endpoint_serves_prometheus_text() {
    let node = node();
    let (mut agent, address) = start(node.dir.path());
    std::thread::sleep(Duration::from_millis(700));
    let metrics = get(&address, "/metrics");
    agent.kill();
    let line = metrics
        .lines()
        .find(|l| {
            l.starts_with("accelfed_agent_holder_idle_seconds_total{kind=\"slurm_job\",id=\"4242\"")
        })
        .unwrap_or_else(|| panic!("no idle counter for job 4242:\n{metrics}"));
    let value: f64 = line
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a value");
    assert!(value > 0.0, "{line}");
    assert!(metrics.contains("# TYPE accelfed_agent_holder_energy_joules_total counter"));
    assert!(metrics.contains(&format!("accelfed_agent_gpu_power_watts{{uuid=\"{IDLE_ALLOCATED_H200}\",model=\"NVIDIA H200\"}} 122.09")));
}

fn failed_start(command: &mut Command) -> (Option<i32>, String) {
    let output = command.output().expect("agent ran");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_missing_library_or_driver_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (code, stderr) = failed_start(&mut agent_command(dir.path()));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("NVIDIA management library could not be loaded")
            && stderr.contains("libnvidia-ml.so.1"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let node = node();
    let (code, stderr) =
        failed_start(agent_command(node.dir.path()).env("NVML_STUB_INIT_ERROR", "9"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("found no running NVIDIA driver: NVIDIA driver is not loaded"),
        "{stderr}"
    );
    assert!(
        !node.dir.path().join("state.json").exists(),
        "nothing written"
    );
}

#[test]
fn a_corrupt_state_file_is_refused_not_overwritten() {
    let node = node();
    let state = node.dir.path().join("state.json");
    std::fs::write(&state, "{not json").expect("state written");
    let (code, stderr) = failed_start(&mut agent_command(node.dir.path()));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&state.display().to_string()), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&state).expect("state kept"),
        "{not json"
    );
}

#[test]
fn idle_lists_the_allocations_idle_now() {
    let node = node();
    let (mut agent, address) = start(node.dir.path());
    std::thread::sleep(Duration::from_millis(800));
    let output = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["idle", "--format", "json", "--agent", &address])
        .output()
        .expect("idle ran");
    let table = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["idle", "--agent", &address])
        .output()
        .expect("idle ran");
    agent.kill();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let listed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let mut holders: Vec<String> = listed["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .map(|a| {
            format!(
                "{}:{}",
                a["kind"].as_str().unwrap_or("?"),
                a["id"].as_str().unwrap_or("?")
            )
        })
        .collect();
    holders.sort();
    // The captured idle holder (job 4242), the holder absent from the busy GPU's samples (job
    // 4243), and the idle MIG instance's process; not the busy pods, not the VMs (unknown).
    assert_eq!(
        holders,
        ["process:6002", "slurm_job:4242", "slurm_job:4243"],
        "{listed}"
    );
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("slurm_job") && table.contains("3 allocation(s) idle"),
        "{table}"
    );

    let refused = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["idle", "--agent", "192.0.2.1:9477"])
        .output()
        .expect("idle ran");
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("loopback"));
}

#[test]
fn without_process_samples_a_sole_holder_takes_the_gpus_utilisation() {
    let node = node();
    let mut command = agent_command(node.dir.path());
    command
        .arg("--once")
        .env("NVML_STUB_NO_PROCESS_SAMPLES", "1");
    let output = command.output().expect("agent ran");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let state: Value = serde_json::from_slice(&output.stdout).expect("JSON state");
    // GPU 0 has one holder and reads 0 %: idle. GPU 1 has two and reads 100 %: whose is unknown.
    let sole = holder(&state, "slurm_job", "4242", IDLE_ALLOCATED_H200);
    assert_eq!(sole["last_activity"], "idle", "{sole}");
    let shared = holder(&state, "slurm_job", "4243", nvml_stub::BUSY_H200);
    assert_eq!(shared["last_activity"], "unknown", "{shared}");
}
