//! Stopping the private Slurm so that nothing of it outlives the test: its jobs are cancelled and
//! gone from `squeue` before any daemon stops (slurmd starts each job's slurmstepd in a session of
//! its own, which stopping slurmd's group does not reach), then the daemons stop as process groups
//! in reverse start order, and whatever still carries this instance's `SLURM_CONF` is killed.

use std::time::{Duration, Instant};

use super::{HarnessError, Slurm};
use crate::owned::{GRACE, processes_with_env, signal_group};

/// How long cancelled jobs may take to leave the queue (slurmstepd's epilogue and kill wait).
const CANCEL_LIMIT: Duration = Duration::from_secs(60);

impl Slurm {
    /// Cancels every job (`scancel`) and waits until `squeue` lists none; an error names the jobs
    /// still queued after `limit`.
    pub fn cancel_all_jobs(&self, limit: Duration) -> Result<(), HarnessError> {
        let started = Instant::now();
        loop {
            let queue = self.run("squeue", &["-h", "-o", "%i"])?;
            let jobs: Vec<&str> = queue.split_whitespace().collect();
            if jobs.is_empty() {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(HarnessError::Start {
                    what: "job cancelling".to_owned(),
                    reason: format!(
                        "jobs {} still queued {} s after scancel",
                        jobs.join(" "),
                        limit.as_secs()
                    ),
                    logs: self.logs(),
                });
            }
            // Cancelling a job that is already completing is harmless, so every pass cancels all.
            let mut args = vec!["--quiet"];
            args.extend(&jobs);
            self.run("scancel", &args)?;
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Processes that still carry this instance's `SLURM_CONF` (slurmstepd, job steps).
    pub fn processes(&self) -> Vec<u32> {
        let entry = format!("SLURM_CONF={}", self.slurm_conf().display());
        processes_with_env(&entry)
    }

    fn stop(&mut self) {
        // Only while slurmctld runs can jobs be cancelled; a start that failed before it has none.
        let controller = self.daemons.iter().any(|d| d.name() == "slurmctld");
        let cancelled = if controller {
            self.cancel_all_jobs(CANCEL_LIMIT)
        } else {
            Ok(())
        };
        if let Err(err) = cancelled {
            eprintln!(
                "accelfed-tests: stopping Slurm in {}: {err}",
                self.dir().display()
            );
        }
        while let Some(mut daemon) = self.daemons.pop() {
            daemon.stop(GRACE);
        }
        let left = self.processes();
        if !left.is_empty() {
            // Said out loud: a test that leaves these behind has a job the queue no longer knew.
            eprintln!(
                "accelfed-tests: killing processes {left:?} of the Slurm in {} left after its daemons",
                self.dir().display()
            );
            for pid in left {
                signal_group(pid, "KILL");
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        self.stop();
        let _ = std::process::Command::new("mysql")
            .args(["-h", "127.0.0.1", "-u", "root", "-e"])
            .arg(format!(
                "DROP DATABASE IF EXISTS `{}`",
                self.layout.database
            ))
            .status();
    }
}
