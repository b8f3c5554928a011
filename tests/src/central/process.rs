//! `accelfed serve` as a process of its own, for the few tests where the process is the point: the
//! binary's smoke test (it starts and prints where it listens), kill tests (SIGKILL at random
//! instants) and the service's own resident memory. Everything else starts the service
//! in-process with [`super::Server`].
//!
//! The service binds its `127.0.0.1:0` listeners itself and prints where they ended up
//! ("listening <name> <address>" on standard error, once bound), which is where the harness reads
//! the addresses from; the rest of the log is drained so the service never blocks on a full pipe,
//! and shown when it does not start. The service runs as a process group of its own
//! ([`crate::owned`]), killed as a group when the value is dropped, a panicking test included.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::listening::Listening;
use crate::owned::OwnedProcess;

/// A running `accelfed serve`, stopped with SIGKILL (its whole process group) when dropped.
#[derive(Debug)]
pub struct ServeProcess {
    child: OwnedProcess,
    /// Where it listens (the struct dereferences to it).
    pub listening: Listening,
    /// The service's log lines; kept so the reader thread keeps draining its standard error.
    log: mpsc::Receiver<String>,
}

/// How long a service may take to start.
const START_LIMIT: Duration = Duration::from_secs(30);

impl ServeProcess {
    /// `accelfed serve --config <config>`; its port-0 listeners get their ports from the kernel at
    /// bind time, read back from what the service prints, so no port is ever bound, released and
    /// then taken by something else.
    pub fn start(config: &Path) -> ServeProcess {
        let mut command = super::accelfed();
        command.args(["serve", "--config"]).arg(config);
        Self::spawn(command, config)
    }

    /// Spawns `command` (an `accelfed serve` of the central.toml at `config`, set up by the
    /// caller: arguments, folder) and waits until it has printed the address of each listener
    /// `config` names: the binary's smoke test of what it prints.
    pub fn spawn(command: Command, config: &Path) -> ServeProcess {
        let listen = load_listen(config);
        let (mut child, log) = launch(command);
        let (mut grpc, mut metrics, mut https) = (None, None, None);
        let mut seen = Vec::new();
        while grpc.is_none()
            || (listen.metrics.is_some() && metrics.is_none())
            || (listen.https.is_some() && https.is_none())
        {
            let Ok(line) = log.recv_timeout(START_LIMIT) else {
                fail(&mut child, &seen);
            };
            // A log line: `<time>  INFO listening grpc 127.0.0.1:PORT`.
            let address = |marker: &str| {
                line.find(marker).map(|at| {
                    line[at + marker.len()..]
                        .trim()
                        .parse::<SocketAddr>()
                        .expect("an address")
                })
            };
            if let Some(a) = address("listening grpc ") {
                grpc = Some(a);
            } else if let Some(a) = address("listening metrics ") {
                metrics = Some(a);
            } else if let Some(a) = address("listening https ") {
                https = Some(a);
            }
            seen.push(line);
        }
        ServeProcess {
            child,
            listening: Listening {
                grpc: grpc.expect("the gRPC address"),
                metrics,
                https,
            },
            log,
        }
    }

    /// The lines the service wrote to standard error since it started listening, or since the
    /// last call, waiting up to `wait` for one of them to satisfy `wanted` (a log line is written
    /// when the service acts, and read here a moment later). Returns every line read.
    pub fn log_until(&self, wait: Duration, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut lines = Vec::new();
        while !lines.iter().any(|line: &String| wanted(line)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.log.recv_timeout(left) {
                Ok(line) => lines.push(line),
                Err(_) => break,
            }
        }
        lines.extend(self.log.try_iter());
        lines
    }

    /// Sends `signal` (a name such as `HUP`) to the service's process group.
    pub fn signal(&self, signal: &str) {
        crate::owned::signal_group(self.child.id(), signal);
    }

    /// The service's resident memory in KiB, from /proc.
    pub fn resident_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the service's /proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc status")
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        // SIGKILL, not a shutdown: the kill tests restart the service on what a crash left.
        self.child.kill();
    }
}

impl std::ops::Deref for ServeProcess {
    type Target = Listening;
    fn deref(&self) -> &Listening {
        &self.listening
    }
}

fn load_listen(config: &Path) -> accelfed_central::ListenConfig {
    accelfed_central::CentralConfig::load(config)
        .unwrap_or_else(|err| panic!("{}: {err}", config.display()))
        .config
        .listen
}

/// Spawns the service with its standard error read line by line on a thread of its own.
fn launch(mut command: Command) -> (OwnedProcess, mpsc::Receiver<String>) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child =
        OwnedProcess::spawn("accelfed serve", &mut command).expect("accelfed serve spawns");
    let stderr = child.child().stderr.take().expect("a piped standard error");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

fn fail(child: &mut OwnedProcess, log: &[String]) -> ! {
    child.kill();
    panic!("accelfed serve did not start:\n{}", log.join("\n"));
}
