//! The node agent's overhead: `accelfed agent` at a 1 s period on 8 GPUs of the stub NVML library
//! (testkit's `nvml_stub`, built with `cc`; holders in Slurm and pod cgroups under a fake /proc),
//! its CPU time (utime + stime from /proc/<pid>/stat) over a measured span after a warm-up, and
//! its resident memory (VmRSS, VmHWM). The target (issue 32): under 1 % of one core and 30 MB.
//!
//!   cargo bench -p accelfed --bench agent_overhead            # release, 60 s measured
//!   ACCELFED_BENCH_SECONDS=20 cargo bench -p accelfed --bench agent_overhead

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use accelfed_testkit::nvml_stub;
use accelfed_testkit::owned::OwnedProcess;

fn main() {
    let seconds: u64 = std::env::var("ACCELFED_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().expect("temp dir");
    let library = nvml_stub::build(dir.path()).expect("stub NVML built");
    nvml_stub::write_cgroups(&dir.path().join("proc"), &nvml_stub::STUB_CGROUPS)
        .expect("fake /proc");
    let mut command = Command::new(env!("CARGO_BIN_EXE_accelfed"));
    command
        .args([
            "agent",
            "--period",
            "1",
            "--listen",
            "127.0.0.1:0",
            "--nvml-library",
        ])
        .arg(&library)
        .arg("--state")
        .arg(dir.path().join("state.json"))
        .arg("--proc-root")
        .arg(dir.path().join("proc"))
        .env("NVML_STUB_GPUS", "8")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut agent = OwnedProcess::spawn("accelfed agent", &mut command).expect("agent starts");
    let mut line = String::new();
    BufReader::new(agent.child().stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let pid = agent.id();
    std::thread::sleep(Duration::from_secs(5)); // warm-up: the first readings, the state file made
    let (cpu_before, started) = (cpu_seconds(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(seconds));
    let (cpu_after, span) = (cpu_seconds(pid), started.elapsed().as_secs_f64());
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_owned())
            .unwrap_or_default()
    };
    agent.kill();
    let state = std::fs::metadata(dir.path().join("state.json"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "agent_overhead: 8 GPUs, 1 s period, {span:.0} s measured: CPU {:.3} % of one core ({:.3} s), VmRSS {} kB, VmHWM {} kB, state file {state} bytes",
        100.0 * (cpu_after - cpu_before) / span,
        cpu_after - cpu_before,
        field("VmRSS:"),
        field("VmHWM:"),
    );
}

/// The process's user + system CPU seconds, from /proc/<pid>/stat (fields 14 and 15; the clock
/// tick is 100 Hz on Linux's x86-64 and arm64 kernels as configured by every distribution).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after_name = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 =
        fields[11].parse::<f64>().unwrap_or(0.0) + fields[12].parse::<f64>().unwrap_or(0.0);
    ticks / 100.0
}
