//! Working a started cluster as the tests do: Slurm commands, job submission, what accounting
//! says (sacct), and waiting for jobs to run or end.

use super::*;

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

impl Slurm {
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
