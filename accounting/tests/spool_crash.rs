//! Crash test of the site spool: a child process (this test binary, re-executed) writes meter runs
//! and acknowledgements in a loop and is killed with SIGKILL at a random moment, many times over;
//! after each kill the spool is reopened and must hold exactly the records of a completed run:
//! nothing half-written, nothing lost.
//!
//! `ACCELFED_SPOOL_CRASH_ITERATIONS` sets the number of kills (default 200; CI runs 1,000),
//! `ACCELFED_SPOOL_CRASH_SEED` replays a failing sequence of kill delays.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use accelfed_accounting::spool::Spool;
use accelfed_schemas::usage::sample::record;
use accelfed_schemas::usage::{RecordType, UsageRecord};

const CHILD: &str = "ACCELFED_SPOOL_CRASH_CHILD";
const FIRST_RUN: &str = "ACCELFED_SPOOL_CRASH_FIRST_RUN";
const VMS: u64 = 40;

/// Run `run` of a fake meter: 40 running VMs whose month grows each run, plus one new job.
fn meter_run(run: u64) -> Vec<UsageRecord> {
    let mut records: Vec<UsageRecord> = (0..VMS)
        .map(|i| {
            let mut r = record(&format!("vm-{i}"));
            r.available_duration = 1_000 + run * 10 + i;
            r.active_duration = None;
            r.last_seen = r.first_seen + chrono::Duration::seconds(r.available_duration as i64);
            r
        })
        .collect();
    let mut job = record(&format!("cluster:{run}"));
    job.record_type = RecordType::Job;
    records.push(job);
    records
}

/// GPU-seconds the spool must hold after runs `0..=run`.
fn expected_total(run: u64) -> f64 {
    let vms: u64 = (0..VMS).map(|i| 1_000 + run * 10 + i).sum();
    vms as f64 + (run + 1) as f64 * record("x").gpu_seconds()
}

/// The child's loop: runs from `FIRST_RUN` on, acknowledging a few records after each, reporting
/// each committed run on stdout. Runs until killed (or a generous cap).
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD) else {
        return; // a normal test run: nothing to do
    };
    let first: u64 = std::env::var(FIRST_RUN).unwrap().parse().unwrap();
    let mut spool = Spool::open(Path::new(&path)).unwrap();
    let mut stdout = std::io::stdout();
    for run in first..first + 10_000 {
        spool.write_run(&meter_run(run)).unwrap();
        writeln!(stdout, "committed {run}").unwrap();
        stdout.flush().unwrap();
        let acks: Vec<_> = spool.pending(7).unwrap().iter().map(|p| p.ack()).collect();
        spool.acknowledge(&acks).unwrap();
    }
}

/// A small xorshift, seeded from the clock unless a seed is given: no dependency for a test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Checks that the spool holds exactly runs `0..=run` and returns whether it does.
fn holds_run(spool: &Spool, run: u64) -> bool {
    let expected = meter_run(run);
    let mut total = 0.0;
    for r in &expected {
        match spool.get(&r.id()).unwrap() {
            Some(stored) if stored.record == *r => {}
            _ => return false,
        }
    }
    for r in 0..=run {
        let job = &meter_run(r)[VMS as usize];
        let Some(stored) = spool.get(&job.id()).unwrap() else {
            return false;
        };
        total += stored.record.gpu_seconds();
    }
    if spool.len().unwrap() != VMS + run + 1 {
        return false;
    }
    total += expected[..VMS as usize]
        .iter()
        .map(UsageRecord::gpu_seconds)
        .sum::<f64>();
    total == expected_total(run)
}

#[test]
fn killed_writers_leave_only_complete_runs() {
    let iterations: u64 = std::env::var("ACCELFED_SPOOL_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let seed = std::env::var("ACCELFED_SPOOL_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("spool crash test: {iterations} kills, ACCELFED_SPOOL_CRASH_SEED={seed}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    // A private copy: a concurrent `cargo test` may relink the original while this runs.
    let exe = dir.path().join("spool-crash-child");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();

    let mut path = dir.path().join("spool-0.sqlite");
    // The last run known to be complete in the current spool file, if any.
    let mut done: Option<u64> = None;
    let mut progressed = 0;
    for iteration in 0..iterations {
        // Now and then a fresh file, so kills also land in creation and migration.
        if iteration % 50 == 0 {
            path = dir.path().join(format!("spool-{iteration}.sqlite"));
            done = None;
        }
        let first = done.map_or(0, |run| run + 1);
        let log_path = dir.path().join("child.log");
        let mut child = Command::new(&exe)
            .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, &path)
            .env(FIRST_RUN, first.to_string())
            .stdout(Stdio::from(File::create(&log_path).unwrap()))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % 60_000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let reported = std::fs::read_to_string(&log_path)
            .unwrap()
            .lines()
            // The harness may print "test crash_child ... " ahead of the first line.
            .filter_map(|line| line.rsplit_once("committed "))
            .filter_map(|(_, n)| n.parse::<u64>().ok())
            .max();
        let spool = Spool::open(&path).unwrap_or_else(|e| panic!("iteration {iteration}: {e}"));
        // The child may have committed one more run than it managed to report.
        let candidates: Vec<u64> = match (done, reported) {
            (_, Some(run)) => vec![run, run + 1],
            (Some(run), None) => vec![run, first],
            (None, None) => vec![0],
        };
        let now_done = candidates
            .iter()
            .copied()
            .find(|&run| holds_run(&spool, run));
        match now_done {
            Some(run) => done = Some(run),
            None => {
                // Only acceptable when nothing was ever committed to this file.
                assert!(
                    done.is_none() && reported.is_none() && spool.is_empty().unwrap(),
                    "iteration {iteration} (seed {seed}): spool matches none of runs \
                     {candidates:?}: {} records, {} pending; child's output:\n{}",
                    spool.len().unwrap(),
                    spool.depth().unwrap(),
                    std::fs::read_to_string(&log_path).unwrap()
                );
            }
        }
        if reported.is_some() {
            progressed += 1;
        }
        // Every pending record decodes; depth agrees with the pending list.
        let pending = spool.pending(usize::MAX).unwrap();
        assert_eq!(pending.len() as u64, spool.depth().unwrap());
    }
    assert!(
        progressed > iterations / 4,
        "the child committed runs in only {progressed} of {iterations} iterations: \
         kills come too early to test anything"
    );
}
