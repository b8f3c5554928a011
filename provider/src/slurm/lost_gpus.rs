//! Jobs whose request names GPUs while their allocated TRES holds none.
//!
//! Slurm's accounting records a job's GRES only where slurm.conf's `AccountingStorageTRES`
//! lists them (`gres/gpu`). Where it does not, `sacct` and slurmrestd carry no GPU for any job
//! and every GPU job reads as a CPU job, metered as nothing. The nodes do not always show it:
//! their `tres` (CfgTRES) may list `gres/gpu` while slurmdbd stores none (Slurm-web's recorded
//! 24.11 and 25.05 clusters), so the check is per job: the request, as the accounting keeps it
//! (`submit_line`; `tres_per_job`/`tres_per_node`/`tres_per_task` where a version prints
//! them), is compared with the allocation. Options given as `#SBATCH` lines in a script are not
//! in `submit_line`; those jobs are not found this way.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};

use super::jobs::SlurmJob;

/// How many job ids the warning names; the rest are counted, and logged at debug level.
const NAMED: usize = 5;

/// Whether a request field names GPUs. Read from the JSON string in place (no copy), since
/// every job of a month carries one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuRequest(pub bool);

impl<'de> de::Deserialize<'de> for GpuRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RequestVisitor;
        impl Visitor<'_> for RequestVisitor {
            type Value = GpuRequest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a job's request as a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<GpuRequest, E> {
                Ok(GpuRequest(names_gpus(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<GpuRequest, E> {
                Ok(GpuRequest(false))
            }
            fn visit_none<E: de::Error>(self) -> Result<GpuRequest, E> {
                Ok(GpuRequest(false))
            }
        }
        deserializer.deserialize_any(RequestVisitor)
    }
}

/// Whether a submit line (`sbatch --partition gpu --gpus 4`) or a TRES-per request
/// (`gres/gpu:4`, 22.05's `gres:gpu:4`) asks for GPUs: `--gpus`, `-G`, `--gpus-per-node`,
/// `--gpus-per-task`, `--gpus-per-socket`, `--gres gpu...`, or a `gres/gpu` TRES, with a count
/// other than 0.
pub fn names_gpus(text: &str) -> bool {
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word.contains("gres/gpu") || word.contains("gres:gpu") {
            return true;
        }
        let (option, inline) = match word.split_once('=') {
            Some((option, value)) => (option, Some(value)),
            None => (word, None),
        };
        let (option, inline) = match option.strip_prefix("-G") {
            // `-G4`, `-G 4`
            Some(count) if !count.is_empty() && !option.starts_with("--") => ("-G", Some(count)),
            _ => (option, inline),
        };
        let gres = option == "--gres";
        if !(gres || option == "-G" || option.starts_with("--gpus")) {
            continue;
        }
        let Some(value) = inline.or_else(|| words.next()) else {
            return false;
        };
        let asks = value.split(',').any(|item| {
            let counted = !item.ends_with(":0") && item != "0";
            counted && (!gres || item == "gpu" || item.starts_with("gpu:"))
        });
        if asks {
            return true;
        }
    }
    false
}

/// The jobs of one run that asked for GPUs and hold none in their allocated TRES.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LostGpus {
    count: u64,
    named: Vec<String>,
}

impl LostGpus {
    /// Counts `job` when it started, asked for GPUs and holds neither GPUs nor shards; says
    /// whether it did.
    pub fn note(&mut self, job: &SlurmJob) -> bool {
        let lost = job.start.is_some() && job.requests_gpus && job.gpus == 0 && job.shards == 0;
        if lost {
            self.count += 1;
            if self.named.len() < NAMED {
                self.named.push(job.job_id.clone());
            }
        }
        lost
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The one warning line of a run, naming the setting to change; `None` when no job lost
    /// its GPUs.
    pub fn warning(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let more = match self.count - self.named.len() as u64 {
            0 => String::new(),
            more => format!(" and {more} more (job ids at debug level)"),
        };
        Some(format!(
            "{} job(s) asked for GPUs but the accounting recorded none in their allocated TRES (jobs {}{more}): they are metered as 0 GPUs; add gres/gpu (and gres/gpu:<type> per type) to AccountingStorageTRES in slurm.conf (AccountingStorageTRES=gres/gpu) and restart slurmctld and slurmdbd",
            self.count,
            self.named.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submit_lines_that_ask_for_gpus() {
        for line in [
            "sbatch --time 1 --wrap sleep 30 && true --partition gpu --gpus 4",
            "sbatch --gpus=h100:1 job.sh",
            "sbatch --partition ia --gpus-per-node h100:1,h200:1",
            "sbatch --gpus-per-task 2 --ntasks 2",
            "sbatch --gpus-per-socket 2 --sockets-per-node 2",
            "sbatch --gres gpu:4",
            "sbatch --gres=shard:2,gpu:a100:1",
            "srun -G 2 hostname",
            "srun -G2 hostname",
            "gres/gpu:4",
            "gres:gpu:2",
        ] {
            assert!(names_gpus(line), "{line}");
        }
    }

    #[test]
    fn submit_lines_that_do_not() {
        for line in [
            "",
            "sbatch --qos normal --partition gpu --time 1:0:0 --wrap /usr/bin/sleep 360",
            "sbatch --gres=shard:2",
            "sbatch --gpus 0",
            "sbatch --gres gpu:0",
            "sbatch --gpus",
            "sbatch --time 1 --gres",
        ] {
            assert!(!names_gpus(line), "{line}");
        }
    }

    fn job(id: &str, requests_gpus: bool, gpus: u64) -> SlurmJob {
        SlurmJob {
            cluster: "hpc".into(),
            job_id: id.into(),
            raw_id: id.into(),
            account: String::new(),
            user: String::new(),
            partition: String::new(),
            qos: String::new(),
            state: "COMPLETED".into(),
            start: chrono::DateTime::from_timestamp(1_700_000_000, 0),
            end: None,
            elapsed_s: 0,
            suspended_s: 0,
            gpus,
            gpu_type: None,
            gpuutil: None,
            shards: 0,
            requests_gpus,
        }
    }

    #[test]
    fn one_warning_counts_every_job_and_names_the_first_five() {
        let mut lost = LostGpus::default();
        assert_eq!(lost.warning(), None);
        assert!(!lost.note(&job("1", true, 2)));
        assert!(!lost.note(&job("2", false, 0)));
        for id in 10..1010 {
            assert!(lost.note(&job(&id.to_string(), true, 0)));
        }
        let mut never_started = job("3", true, 0);
        never_started.start = None;
        assert!(!lost.note(&never_started));
        let warning = lost.warning().unwrap();
        assert_eq!(lost.count(), 1000);
        assert!(
            warning.starts_with("1000 job(s) asked for GPUs"),
            "{warning}"
        );
        assert!(
            warning.contains("(jobs 10, 11, 12, 13, 14 and 995 more"),
            "{warning}"
        );
        assert!(warning.contains("AccountingStorageTRES=gres/gpu"));
        assert!(!warning.contains("1009"));
    }
}
