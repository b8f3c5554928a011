//! `accelfed serve` as a process of its own, for the few tests where the process is the point: the
//! binary's smoke test (it starts and prints where it listens), kill tests (SIGKILL at random
//! instants) and the service's own resident memory. Everything else starts the service
//! in-process with [`super::Server`].
//!
//! [`ServeProcess::start`] gives each `127.0.0.1:0` listener of the configuration a free port
//! first, so it knows the addresses and waits until they accept connections; only
//! [`ServeProcess::spawn`], for the smoke test of what the binary prints, reads them from the
//! "listening <name> <address>" lines on standard error. Either way the rest of the log is drained
//! so the service never blocks on a full pipe, and shown when it does not start.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::listening::Listening;

/// A running `accelfed serve`, stopped with SIGKILL when dropped.
#[derive(Debug)]
pub struct ServeProcess {
    child: Child,
    /// Where it listens (the struct dereferences to it).
    pub listening: Listening,
    /// The service's log lines; kept so the reader thread keeps draining its standard error.
    log: mpsc::Receiver<String>,
}

/// How long a service may take to start.
const START_LIMIT: Duration = Duration::from_secs(30);

impl ServeProcess {
    /// `accelfed serve --config <config>`, its port-0 listeners on free ports chosen here.
    pub fn start(config: &Path) -> ServeProcess {
        let config = with_free_ports(config);
        let listen = load_listen(&config);
        let mut command = super::accelfed();
        command.args(["serve", "--config"]).arg(&config);
        let (mut child, log) = launch(command);
        let wanted = [Some(listen.grpc), listen.metrics, listen.https];
        let deadline = Instant::now() + START_LIMIT;
        for address in wanted.into_iter().flatten() {
            while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
                let exited = child.try_wait().ok().flatten().is_some();
                if exited || Instant::now() > deadline {
                    fail(&mut child, &log.try_iter().collect::<Vec<_>>());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        ServeProcess {
            child,
            listening: Listening {
                grpc: listen.grpc,
                metrics: listen.metrics,
                https: listen.https,
            },
            log,
        }
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

fn load_listen(config: &Path) -> accelfed_central::config::ListenConfig {
    accelfed_central::CentralConfig::load(config)
        .unwrap_or_else(|err| panic!("{}: {err}", config.display()))
        .config
        .listen
}

/// Spawns the service with its standard error read line by line on a thread of its own.
fn launch(mut command: Command) -> (Child, mpsc::Receiver<String>) {
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
    (child, rx)
}

fn fail(child: &mut Child, log: &[String]) -> ! {
    let _ = child.kill();
    let _ = child.wait();
    panic!("accelfed serve did not start:\n{}", log.join("\n"));
}

/// `config` with each `127.0.0.1:0` given a port that was free a moment ago (bound and released),
/// written beside it (its relative paths stay right); `config` itself when it names none.
fn with_free_ports(config: &Path) -> PathBuf {
    let text =
        std::fs::read_to_string(config).unwrap_or_else(|err| panic!("{}: {err}", config.display()));
    let parts: Vec<&str> = text.split("\"127.0.0.1:0\"").collect();
    if parts.len() == 1 {
        return config.to_owned();
    }
    // All held until all are chosen, so no two listeners get the same port.
    let held: Vec<std::net::TcpListener> = parts[1..]
        .iter()
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    let mut out = parts[0].to_owned();
    for (part, listener) in parts[1..].iter().zip(&held) {
        let port = listener.local_addr().expect("a bound address").port();
        out.push_str(&format!("\"127.0.0.1:{port}\"{part}"));
    }
    drop(held);
    let path = config.with_extension("ports.toml");
    std::fs::write(&path, out).expect("write the configuration with its ports");
    path
}
