//! A private one-node Slurm with accounting for tests: munged, slurmdbd (on the machine's MariaDB,
//! in a database of its own), slurmctld, slurmd with fake A100s (and GPU shards on them, with
//! [`Slurm::start_sharded`]), and optionally slurmrestd with JWT,
//! all on 127.0.0.1 with free ports and a temp dir. Everything stops, and the database is dropped,
//! when the value is dropped.
//!
//! Jobs really run (as the users `af-alice` of account `vo.atlas` and `af-bob` of `vo.cms`), so
//! what Slurm reports about GPUs and accounting is Slurm's own doing, not ours.

mod config;
mod install;
mod jobs;
mod rest;
mod stop;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::owned::OwnedProcess;
use crate::port::ReservedPort;

pub use config::Layout;
pub use install::PACKAGES;
pub use jobs::Allocation;
pub use rest::Rest;

/// Users the harness submits as, with their accounts.
pub const USERS: [(&str, &str); 2] = [("af-alice", "vo.atlas"), ("af-bob", "vo.cms")];
/// The user slurmrestd runs as and tokens are made for (not root, not SlurmUser).
pub const REST_USER: &str = "af-rest";

const READY: Duration = Duration::from_secs(60);

/// What can go wrong starting or driving the instance; start failures carry the daemons' logs.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error(
        "{path} is missing and CI=true, so the harness does not install it: apt-get install -y {packages}"
    )]
    Missing { path: String, packages: String },
    #[error("{path} is missing and installing it failed: {detail}")]
    Install { path: String, detail: String },
    #[error("{action}: {source}")]
    Io {
        action: String,
        source: std::io::Error,
    },
    #[error("{what} did not become ready: {reason}\n{logs}")]
    Start {
        what: String,
        reason: String,
        logs: String,
    },
    #[error("`{command}` failed ({status}): {output}")]
    Command {
        command: String,
        status: String,
        output: String,
    },
}

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> HarnessError {
    let action = action.into();
    move |source| HarnessError::Io { action, source }
}

/// A running private Slurm.
#[derive(Debug)]
pub struct Slurm {
    dir: TempDir,
    pub layout: Layout,
    /// In start order: munged, slurmdbd, slurmctld, slurmd, then slurmrestd where started.
    daemons: Vec<OwnedProcess>,
    rest: Option<Rest>,
}

impl Slurm {
    /// Installs what is missing (not under CI), writes the configuration, starts the daemons in
    /// order and waits until the node is idle and the accounts exist.
    pub fn start() -> Result<Self, HarnessError> {
        Self::start_sharded(0)
    }

    /// As [`Slurm::start`], and each GPU also offers `shards_per_gpu` GPU shards
    /// (`gres/shard:a100`, see [`Layout::shards_per_gpu`]) that accounting tracks; 0 is the
    /// cluster [`Slurm::start`] gives.
    pub fn start_sharded(shards_per_gpu: u32) -> Result<Self, HarnessError> {
        install::ensure_installed()?;
        // The daemons take no bound socket from their parent and print no port they chose: their
        // ports are reserved until they answer (crate::port), so no other process takes one in
        // between. A start that fails for another reason (a slow machine) is tried again.
        let mut attempt = 1;
        loop {
            match Self::start_once(shards_per_gpu) {
                Err(err) if attempt < 3 => {
                    eprintln!("accelfed-tests: Slurm start {attempt} failed, retrying: {err}");
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn start_once(shards_per_gpu: u32) -> Result<Self, HarnessError> {
        let dir = tempfile::Builder::new()
            .prefix("accelfed-slurm-")
            .tempdir()
            .map_err(io("creating the temp dir"))?;
        let unique = format!(
            "{}{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_micros())
        );
        let ports = [
            ReservedPort::new().map_err(io("reserving a port"))?,
            ReservedPort::new().map_err(io("reserving a port"))?,
            ReservedPort::new().map_err(io("reserving a port"))?,
        ];
        let layout = Layout {
            cluster: format!("af{unique}"),
            node: "afnode".to_owned(),
            database: format!("accelfed_slurm_{unique}"),
            ctld_port: ports[0].port(),
            slurmd_port: ports[1].port(),
            dbd_port: ports[2].port(),
            gpus: 4,
            shards_per_gpu,
            cpus: 8,
        };
        let mut slurm = Slurm {
            dir,
            layout,
            daemons: Vec::new(),
            rest: None,
        };
        slurm.write_files()?;
        slurm.boot()?;
        drop(ports);
        Ok(slurm)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn slurm_conf(&self) -> PathBuf {
        self.dir().join("slurm.conf")
    }

    fn write_files(&self) -> Result<(), HarnessError> {
        use std::os::unix::fs::PermissionsExt;
        let d = self.dir();
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir_all(d.join(sub)).map_err(io(format!("creating {sub}")))?;
        }
        // Jobs run as other users; they need to reach the MUNGE socket through this folder.
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))
            .map_err(io("chmod temp dir"))?;
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map_err(io("reading the hostname"))?;
        let write = |name: &str, text: &[u8], mode: u32| -> Result<(), HarnessError> {
            let path = d.join(name);
            std::fs::write(&path, text).map_err(io(format!("writing {}", path.display())))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .map_err(io(format!("chmod {}", path.display())))
        };
        write(
            "slurm.conf",
            config::slurm_conf(d, &self.layout, hostname.trim()).as_bytes(),
            0o644,
        )?;
        write(
            "slurmdbd.conf",
            config::slurmdbd_conf(d, &self.layout).as_bytes(),
            0o600,
        )?;
        write(
            "gres.conf",
            config::gres_conf(d, &self.layout).as_bytes(),
            0o644,
        )?;
        for index in 0..self.layout.gpus {
            write(&format!("gpu{index}"), b"", 0o644)?;
        }
        write("munge.key", &random_bytes(1024)?, 0o400)?;
        write("jwt.key", &random_bytes(32)?, 0o600)?;
        Ok(())
    }

    fn spawn(
        &mut self,
        name: &'static str,
        program: &str,
        args: &[&str],
    ) -> Result<(), HarnessError> {
        let log = std::fs::File::create(self.dir().join(format!("log/{name}.out")))
            .map_err(io(format!("creating the {name} log")))?;
        let err = log.try_clone().map_err(io("cloning a log handle"))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .env("SLURM_CONF", self.slurm_conf())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        let daemon =
            OwnedProcess::spawn(name, &mut command).map_err(io(format!("starting {program}")))?;
        self.daemons.push(daemon);
        Ok(())
    }

    fn boot(&mut self) -> Result<(), HarnessError> {
        let d = self.dir().to_owned();
        let socket = d.join("munge.sock");
        let arg = |flag: &str, name: &str| format!("--{flag}={}", d.join(name).display());
        let (sock, key, pid, log, seed) = (
            arg("socket", "munge.sock"),
            arg("key-file", "munge.key"),
            arg("pid-file", "munged.pid"),
            arg("log-file", "log/munged.log"),
            arg("seed-file", "munge.seed"),
        );
        self.spawn(
            "munged",
            "/usr/sbin/munged",
            &["--foreground", "--force", &sock, &key, &pid, &log, &seed],
        )?;
        self.wait("munged", |_| Ok(socket.exists()))?;
        self.spawn("slurmdbd", "/usr/sbin/slurmdbd", &["-D"])?;
        self.wait("slurmdbd", |s| {
            Ok(s.run("sacctmgr", &["-n", "list", "cluster"]).is_ok())
        })?;
        self.run(
            "sacctmgr",
            &["-i", "add", "cluster", &self.layout.cluster.clone()],
        )?;
        self.spawn("slurmctld", "/usr/sbin/slurmctld", &["-D", "-i"])?;
        self.wait("slurmctld", |s| {
            Ok(s.run("scontrol", &["ping"]).is_ok_and(|o| o.contains("UP")))
        })?;
        let node = self.layout.node.clone();
        self.spawn("slurmd", "/usr/sbin/slurmd", &["-D", "-N", &node])?;
        self.wait("slurmd", |s| {
            Ok(s.run("sinfo", &["-h", "-o", "%T"])
                .is_ok_and(|o| o.trim() == "idle"))
        })?;
        self.run("sacctmgr", &["-i", "add", "account", "vo.atlas,vo.cms"])?;
        for (user, account) in USERS.iter().chain([&(REST_USER, "vo.atlas")]) {
            ensure_user(user)?;
            self.run(
                "sacctmgr",
                &["-i", "add", "user", user, &format!("Account={account}")],
            )?;
        }
        Ok(())
    }

    /// Polls `ready` until it holds, failing with every daemon's log after a minute.
    fn wait(
        &mut self,
        what: &str,
        mut ready: impl FnMut(&mut Self) -> Result<bool, HarnessError>,
    ) -> Result<(), HarnessError> {
        let started = Instant::now();
        loop {
            if ready(self)? {
                return Ok(());
            }
            for daemon in &mut self.daemons {
                if let Ok(Some(status)) = daemon.try_wait() {
                    return Err(HarnessError::Start {
                        what: what.to_owned(),
                        reason: format!("{} exited with {status}", daemon.name()),
                        logs: self.logs(),
                    });
                }
            }
            if started.elapsed() > READY {
                return Err(HarnessError::Start {
                    what: what.to_owned(),
                    reason: format!("not ready after {} s", READY.as_secs()),
                    logs: self.logs(),
                });
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The tail of every log the daemons wrote, for failure messages.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir().join("log")) else {
            return text;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let content = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = content.lines().collect();
            let tail = lines[lines.len().saturating_sub(40)..].join("\n");
            text.push_str(&format!("--- {} ---\n{tail}\n", path.display()));
        }
        text
    }
}

fn checked(command: &str, output: Output) -> Result<String, HarnessError> {
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(HarnessError::Command {
            command: command.to_owned(),
            status: output.status.to_string(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        })
    }
}

fn random_bytes(len: usize) -> Result<Vec<u8>, HarnessError> {
    use std::io::Read;
    let mut bytes = vec![0; len];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(io("reading /dev/urandom"))?;
    Ok(bytes)
}

/// Creates a local user without a home when it does not exist.
fn ensure_user(user: &str) -> Result<(), HarnessError> {
    let exists = Command::new("id")
        .arg(user)
        .output()
        .is_ok_and(|o| o.status.success());
    if exists {
        return Ok(());
    }
    let output = Command::new("useradd")
        .args(["-M", "-s", "/bin/sh", user])
        .output()
        .map_err(io("running useradd"))?;
    checked(&format!("useradd {user}"), output).map(|_| ())
}
