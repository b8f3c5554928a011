//! `accelfed serve` as a process of its own, for the few tests where the process is the point: the
//! binary's smoke test (it starts and prints where it listens), kill tests (SIGKILL at random
//! instants) and the service's own resident memory. Everything else starts the service
//! in-process with [`super::Server`].
//!
//! The addresses are read from the "listening <name> <address>" lines `accelfed serve` prints on
//! standard error; the rest of its log is drained so it never blocks on a full pipe.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::listening::Listening;

/// A running `accelfed serve`, stopped with SIGKILL when dropped.
#[derive(Debug)]
pub struct ServeProcess {
    child: Child,
    /// Where it listens (the struct dereferences to it).
    pub listening: Listening,
    /// The service's log lines; kept so the reader thread keeps draining its standard error.
    _log: mpsc::Receiver<String>,
}

impl ServeProcess {
    /// `accelfed serve --config <config>`.
    pub fn start(config: &Path) -> ServeProcess {
        let mut command = super::accelfed();
        command.args(["serve", "--config"]).arg(config);
        Self::spawn(command, config)
    }

    /// Spawns `command` (an `accelfed serve` of the central.toml at `config`, set up by the
    /// caller: arguments, folder) and waits until it has printed the address of each listener
    /// `config` names.
    pub fn spawn(mut command: Command, config: &Path) -> ServeProcess {
        let listen = accelfed_central::CentralConfig::load(config)
            .unwrap_or_else(|err| panic!("{}: {err}", config.display()))
            .config
            .listen;
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("accelfed serve spawns");
        let stderr = child.stderr.take().expect("a piped standard error");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let (mut grpc, mut metrics, mut https) = (None, None, None);
        let mut seen = Vec::new();
        while grpc.is_none()
            || (listen.metrics.is_some() && metrics.is_none())
            || (listen.https.is_some() && https.is_none())
        {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    let address = |prefix: &str| {
                        line.strip_prefix(prefix)
                            .map(|a| a.parse::<SocketAddr>().expect("an address"))
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
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("accelfed serve did not start:\n{}", seen.join("\n"));
                }
            }
        }
        ServeProcess {
            child,
            listening: Listening {
                grpc: grpc.expect("the gRPC address"),
                metrics,
                https,
            },
            _log: rx,
        }
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
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl std::ops::Deref for ServeProcess {
    type Target = Listening;
    fn deref(&self) -> &Listening {
        &self.listening
    }
}
