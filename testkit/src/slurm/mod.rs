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

/// One allocation as `sacct -X -P -o JobID,Account,ElapsedRaw,AllocTRES` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub job_id: String,
    pub account: String,
    pub elapsed_s: u64,
    /// As printed: `billing=1,cpu=1,gres/shard:a100=3,gres/shard=3,node=1`.
    pub alloc_tres: String,
}

impl Allocation {
    /// The count of one TRES (`gres/gpu`, `gres/shard:a100`); 0 when the allocation has none.
    pub fn tres(&self, name: &str) -> Result<u64, HarnessError> {
        let value = self
            .alloc_tres
            .split(',')
            .find_map(|item| item.strip_prefix(name)?.strip_prefix('='));
        match value {
            None => Ok(0),
            Some(n) => n.parse().map_err(|_| HarnessError::Command {
                command: "sacct".to_owned(),
                status: "exit 0".to_owned(),
                output: format!("job {}: {name}={n} is not a count", self.job_id),
            }),
        }
    }
}

/// slurmrestd, where started.
#[derive(Debug, Clone)]
pub struct Rest {
    pub url: String,
    pub user: String,
    pub token_file: PathBuf,
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

    /// A Slurm command against this instance (`SLURM_CONF` set, times in UTC).
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env("SLURM_CONF", self.slurm_conf())
            .env("TZ", "UTC");
        command
    }

    /// Runs a command; its stdout, or an error with its output.
    pub fn run(&self, program: &str, args: &[&str]) -> Result<String, HarnessError> {
        let output = self
            .command(program)
            .args(args)
            .output()
            .map_err(io(format!("running {program}")))?;
        checked(&format!("{program} {}", args.join(" ")), output)
    }

    /// Slurm's own truth for the meters: sum(ElapsedRaw x gres/gpu) per account over the
    /// allocations (`sacct -X`) that ran between `start` and `end` (`sacct` times).
    pub fn sacct_gpu_seconds(
        &self,
        start: &str,
        end: Option<&str>,
    ) -> Result<BTreeMap<String, u64>, HarnessError> {
        let mut sums = BTreeMap::new();
        for job in self.sacct_allocations(start, end)? {
            *sums.entry(job.account.clone()).or_insert(0) +=
                job.elapsed_s * job.tres("gres/gpu")?;
        }
        Ok(sums)
    }

    /// Every allocation (`sacct -X`, steps left out) that ran between `start` and `end` (`sacct`
    /// times), as `sacct -P -o JobID,Account,ElapsedRaw,AllocTRES` prints it.
    pub fn sacct_allocations(
        &self,
        start: &str,
        end: Option<&str>,
    ) -> Result<Vec<Allocation>, HarnessError> {
        let mut args = vec![
            "-a",
            "-X",
            "-P",
            "-n",
            "-o",
            "JobID,Account,ElapsedRaw,AllocTRES",
        ];
        args.extend(["--starttime", start]);
        if let Some(end) = end {
            args.extend(["--endtime", end]);
        }
        let text = self.run("sacct", &args)?;
        let mut jobs = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let unreadable = || HarnessError::Command {
                command: format!("sacct {}", args.join(" ")),
                status: "exit 0".into(),
                output: format!("unreadable line {line:?}"),
            };
            let fields: Vec<&str> = line.split('|').collect();
            let [job_id, account, elapsed, tres] = fields[..] else {
                return Err(unreadable());
            };
            jobs.push(Allocation {
                job_id: job_id.to_owned(),
                account: account.to_owned(),
                elapsed_s: elapsed.parse().map_err(|_| unreadable())?,
                alloc_tres: tres.to_owned(),
            });
        }
        Ok(jobs)
    }

    /// Submits a batch job as `user` (`sbatch --parsable` + `args`); its job id.
    pub fn submit(&self, user: &str, args: &[&str]) -> Result<String, HarnessError> {
        let output = self
            .command("runuser")
            .args([
                "-u",
                user,
                "--",
                "sbatch",
                "--parsable",
                "--chdir=/tmp",
                "--output=/dev/null",
            ])
            .args(args)
            .output()
            .map_err(io("running sbatch"))?;
        let out = checked(&format!("sbatch as {user} {}", args.join(" ")), output)?;
        Ok(out.trim().split(';').next().unwrap_or("").to_owned())
    }

    /// The node's GPUs as `scontrol show node` reports them: (total from `Gres=gpu:a100:N`, used
    /// from `AllocTRES=...gres/gpu=N`).
    pub fn scontrol_gpus(&self) -> Result<(u32, u32), HarnessError> {
        let text = self.run("scontrol", &["show", "node", &self.layout.node])?;
        let field = |key: &str| {
            text.split_whitespace()
                .find_map(|token| token.strip_prefix(key))
                .unwrap_or("")
                .to_owned()
        };
        let unreadable = |what: &str| HarnessError::Command {
            command: format!("scontrol show node {}", self.layout.node),
            status: "ok".to_owned(),
            output: format!("cannot read {what} in:\n{text}"),
        };
        let total = field("Gres=gpu:a100:")
            .split('(')
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| unreadable("Gres=gpu:a100:N"))?;
        let used = match field("AllocTRES=")
            .split(',')
            .find_map(|t| t.strip_prefix("gres/gpu="))
        {
            Some(n) => n.parse().map_err(|_| unreadable("AllocTRES gres/gpu"))?,
            None => 0,
        };
        Ok((total, used))
    }

    /// Waits until every job of `ids` runs.
    pub fn wait_running(&self, ids: &[&str], limit: Duration) -> Result<(), HarnessError> {
        let started = Instant::now();
        loop {
            let running = self.run("squeue", &["-h", "-t", "R", "-o", "%i"])?;
            if ids
                .iter()
                .all(|id| running.lines().any(|line| line.trim() == *id))
            {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(HarnessError::Start {
                    what: format!("jobs {ids:?}"),
                    reason: format!(
                        "not running after {} s; running: {running}",
                        limit.as_secs()
                    ),
                    logs: self.logs(),
                });
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Starts slurmrestd with JWT on a free port and writes a token for [`REST_USER`].
    pub fn start_rest(&mut self) -> Result<Rest, HarnessError> {
        if let Some(rest) = &self.rest {
            return Ok(rest.clone());
        }
        let reserved = ReservedPort::new().map_err(io("reserving a port"))?;
        let port = reserved.port();
        let listen = format!("127.0.0.1:{port}");
        let log = std::fs::File::create(self.dir().join("log/slurmrestd.out"))
            .map_err(io("creating the slurmrestd log"))?;
        let err = log.try_clone().map_err(io("cloning a log handle"))?;
        let mut command = Command::new("/usr/sbin/slurmrestd");
        command
            .args([
                "-u",
                REST_USER,
                "-g",
                REST_USER,
                "-a",
                "rest_auth/jwt",
                &listen,
            ])
            .env("SLURM_CONF", self.slurm_conf())
            // slurmrestd itself needs no key: tokens are checked by slurmctld and slurmdbd.
            .env("SLURM_JWT", "daemon")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        let daemon =
            OwnedProcess::spawn("slurmrestd", &mut command).map_err(io("starting slurmrestd"))?;
        self.daemons.push(daemon);
        let token = self.run(
            "scontrol",
            &["token", &format!("username={REST_USER}"), "lifespan=3600"],
        )?;
        let token = token
            .trim()
            .strip_prefix("SLURM_JWT=")
            .unwrap_or(token.trim())
            .to_owned();
        let token_file = self.dir().join("rest.jwt");
        std::fs::write(&token_file, token).map_err(io("writing the token file"))?;
        self.wait("slurmrestd", |_| {
            Ok(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok())
        })?;
        drop(reserved);
        let rest = Rest {
            url: format!("http://{listen}"),
            user: REST_USER.to_owned(),
            token_file,
        };
        self.rest = Some(rest.clone());
        Ok(rest)
    }

    /// Waits until no job is pending or running and accounting has every job's end.
    pub fn wait_all_done(&mut self, limit: Duration) -> Result<(), HarnessError> {
        let started = Instant::now();
        loop {
            let queue = self.run("squeue", &["-h", "-o", "%i"])?;
            let open = self.run(
                "sacct",
                &[
                    "-a",
                    "-X",
                    "-n",
                    "-P",
                    "-o",
                    "End",
                    "--starttime",
                    "2000-01-01",
                ],
            )?;
            if queue.trim().is_empty() && !open.lines().any(|l| l.trim() == "Unknown") {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(HarnessError::Start {
                    what: "jobs".to_owned(),
                    reason: format!("still open after {} s: {queue}", limit.as_secs()),
                    logs: self.logs(),
                });
            }
            std::thread::sleep(Duration::from_secs(1));
        }
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
