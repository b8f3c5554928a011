//! The GPU-hours meter over a large `sacct --json`: parsing and metering 1,000,000 GPU jobs against
//! the floor (serde_json reading the same bytes into `IgnoredAny`), and peak memory at 100,000 and
//! at 1,000,000 jobs (the reader streams, so it must not grow).
//!
//! The document is generated on the fly from jobs Slurm 22.05 printed (`provider/tests/fixtures/slurm/v0.0.38/
//! sacct.json`, recorded from the real-Slurm harness: pretty-printed as `sacct --json` prints it,
//! with their `batch` and `extern` steps and every TRES list), each copy with its own job id. The
//! generator is a `Read`, so neither side holds the document; its own cost is measured too.
//!
//! A `cargo bench` target without a harness (figures in BENCHMARKS.md, `## Slurm`):
//!
//! ```text
//! cargo bench --workspace --locked --bench slurm_scale
//! ```
//!
//! Without `--bench` (as `cargo test` runs it: the target has `test = true`) it runs only the
//! small check that the generated document is what the benchmark claims: every job read, and
//! GPU-seconds per VO as the templates add up.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use serde::de::IgnoredAny;

use accelfed_accounting::meter::records_for;
use accelfed_provider::config::Config;
use accelfed_provider::slurm::{SlurmConfig, observation, read_jobs};
use accelfed_schemas::names::SiteName;

mod sacct;

use sacct::*;

const CHILD_ENV: &str = "ACCELFED_SLURM_BENCH_JOBS";

fn config() -> SlurmConfig {
    let text = "[site]\nname = \"BENCH\"\n[[slurm]]\nid = \"hpc\"\n\
                [slurm.gpu_types]\na100 = { model = \"NVIDIA A100-SXM4-80GB\", memory_mb = 81920 }\n\
                [slurm.accounts]\n\"vo.atlas\" = { vo = \"atlas\", fqan = \"/atlas\" }\n\"vo.cms\" = \"cms\"\n";
    Config::parse(Path::new("bench.toml"), text)
        .unwrap()
        .slurm
        .remove(0)
}

/// After every recorded job ended.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
}

/// What the meter produced: jobs read, records, GPU-seconds per VO, bytes read.
#[derive(Debug, PartialEq, Eq)]
struct Metered {
    jobs: u64,
    records: u64,
    gpu_seconds: BTreeMap<String, u64>,
    bytes: u64,
}

/// Parsing and metering the generated document, streamed.
fn meter(jobs: u64) -> Metered {
    let mut sacct = Sacct::new(jobs);
    let mut metered = meter_from(&mut sacct);
    metered.bytes = sacct.bytes;
    metered
}

/// Parsing and metering: jobs -> observations -> monthly records, summed as they come.
fn meter_from(sacct: impl Read) -> Metered {
    let (config, site, now) = (config(), SiteName::new("BENCH").unwrap(), now());
    let mut records = 0;
    let mut gpu_seconds: BTreeMap<String, u64> = BTreeMap::new();
    let summary = read_jobs(sacct, &mut |job| {
        let job = job.unwrap();
        let Some(observation) = observation(&config, &site, &job).unwrap() else {
            return;
        };
        for record in records_for(&observation, now).unwrap() {
            records += 1;
            let vo = record.vo.as_ref().map_or("", |vo| vo.as_str());
            let seconds = record.count.as_whole().unwrap() * record.available_duration;
            match gpu_seconds.get_mut(vo) {
                Some(sum) => *sum += seconds,
                None => {
                    gpu_seconds.insert(vo.to_owned(), seconds);
                }
            }
        }
    })
    .unwrap();
    Metered {
        jobs: summary.jobs,
        records,
        gpu_seconds,
        bytes: 0,
    }
}

/// The floor: serde_json reading the same bytes into `IgnoredAny`.
fn floor(jobs: u64) -> u64 {
    let mut sacct = Sacct::new(jobs);
    let mut deserializer = serde_json::Deserializer::from_reader(&mut sacct);
    serde::Deserialize::deserialize(&mut deserializer)
        .map(|_: IgnoredAny| ())
        .unwrap();
    deserializer.end().unwrap();
    sacct.bytes
}

/// The generated document in memory.
fn document(jobs: u64) -> Vec<u8> {
    let mut document = Vec::new();
    Sacct::new(jobs).read_to_end(&mut document).unwrap();
    document
}

/// The generator alone, drained.
fn generate(jobs: u64) -> u64 {
    let mut sacct = Sacct::new(jobs);
    std::io::copy(&mut sacct, &mut std::io::sink()).unwrap()
}

/// GPU-seconds per VO the templates add up to: per four jobs, atlas 2x20 + 1x5 + 1x5, cms 1x20.
fn expected(jobs: u64) -> BTreeMap<String, u64> {
    let per_position = [("atlas", 40), ("cms", 20), ("atlas", 5), ("atlas", 5)];
    let mut sums = BTreeMap::new();
    for n in 0..jobs {
        let (vo, seconds) = per_position[(n % 4) as usize];
        *sums.entry(vo.to_owned()).or_insert(0) += seconds;
    }
    sums
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test` runs the check.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        bench_parse_and_meter_sacct_json();
    } else {
        the_generated_document_reads_back_with_every_job_and_its_gpu_seconds();
        println!(
            "slurm_scale: the generated document checks out (run the benchmark with cargo bench)"
        );
    }
}

fn the_generated_document_reads_back_with_every_job_and_its_gpu_seconds() {
    let metered = meter(2_001);
    assert_eq!(metered.jobs, 2_001);
    assert_eq!(metered.records, 2_001);
    assert_eq!(metered.gpu_seconds, expected(2_001));
    assert_eq!(floor(2_001), metered.bytes);
    assert_eq!(generate(2_001), metered.bytes);
    // As large as Slurm 22.05 prints them (indented, 10 to 21 KB a job with its steps).
    let per_job = metered.bytes / 2_001;
    assert!((10_000..21_000).contains(&per_job), "{per_job} bytes a job");
}

fn timed<T>(run: impl Fn() -> T, rounds: u32) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..rounds {
        let started = Instant::now();
        let value = run();
        best = best.min(started.elapsed());
        last = Some(value);
    }
    (best, last.unwrap())
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Peak resident memory of metering `jobs` jobs, in a fresh process of this benchmark binary.
fn peak_kib(jobs: u64) -> u64 {
    let output = Command::new(std::env::current_exe().unwrap())
        .arg("--bench")
        .env(CHILD_ENV, jobs.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find_map(|line| line.split_once("peak_kib=").map(|(_, n)| n))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stdout}"))
}

fn cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_default()
}

fn bench_parse_and_meter_sacct_json() {
    if let Ok(jobs) = std::env::var(CHILD_ENV) {
        let jobs: u64 = jobs.parse().unwrap();
        let metered = meter(jobs);
        assert_eq!(metered.jobs, jobs);
        println!("peak_kib={}", status_kib("VmHWM:"));
        return;
    }
    let jobs: u64 = std::env::var("ACCELFED_SLURM_BENCH_SIZE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let rounds = 3;
    let small = jobs / 10;
    let mb = |bytes: u64| bytes as f64 / 1e6;
    let rate = |bytes: u64, d: Duration| mb(bytes) / d.as_secs_f64();
    println!(
        "machine: {} ({} CPUs)",
        cpu(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    // The floor: serde_json's fastest reading of the bytes (from_slice into IgnoredAny), over
    // the N/10 document held in memory; parse + meter over the very same bytes.
    let held = document(small);
    let (floor_time, ()) = timed(
        || {
            serde_json::from_slice::<IgnoredAny>(&held).unwrap();
        },
        rounds,
    );
    let (held_time, held_metered) = timed(|| meter_from(&held[..]), rounds);
    assert_eq!(held_metered.gpu_seconds, expected(small));
    let (reader_floor_time, ()) = timed(
        || {
            let mut de = serde_json::Deserializer::from_reader(&held[..]);
            serde::Deserialize::deserialize(&mut de)
                .map(|_: IgnoredAny| ())
                .unwrap();
        },
        1,
    );
    let held_bytes = held.len() as u64;
    drop(held);
    let floor_rate = rate(held_bytes, floor_time);

    // N jobs, streamed from the generator (as from sacct's pipe): never all in memory.
    let (generator, bytes) = timed(|| generate(jobs), 1);
    let (meter_time, metered) = timed(|| meter(jobs), 2);
    assert_eq!(metered.bytes, bytes);
    assert_eq!(metered.gpu_seconds, expected(jobs));
    let stream_rate = rate(bytes, meter_time);
    let held_ratio = held_time.as_secs_f64() / floor_time.as_secs_f64();
    let ratio = floor_rate / stream_rate;
    let (peak_small, peak_large) = (peak_kib(small), peak_kib(jobs));

    println!(
        "{small} jobs in memory: {:.0} MB ({} bytes a job), best of {rounds}",
        mb(held_bytes),
        held_bytes / small
    );
    println!(
        "  floor, from_slice into IgnoredAny: {:>7.2} s ({floor_rate:>5.0} MB/s)",
        floor_time.as_secs_f64()
    );
    println!(
        "  parse + meter, same bytes:         {:>7.2} s ({:>5.0} MB/s) = {held_ratio:.2} x floor",
        held_time.as_secs_f64(),
        rate(held_bytes, held_time)
    );
    println!(
        "  (from_reader into IgnoredAny:      {:>7.2} s ({:>5.0} MB/s))",
        reader_floor_time.as_secs_f64(),
        rate(held_bytes, reader_floor_time)
    );
    println!("{jobs} jobs streamed: {:.0} MB, best of 2", mb(bytes));
    println!(
        "  generator alone:                   {:>7.2} s ({:>5.0} MB/s)",
        generator.as_secs_f64(),
        rate(bytes, generator)
    );
    println!(
        "  parse + meter:                     {:>7.2} s ({stream_rate:>5.0} MB/s) = {ratio:.2} x floor (per byte), {} records",
        meter_time.as_secs_f64(),
        metered.records
    );
    println!(
        "peak RSS, parse + meter in a fresh process: {small} jobs {peak_small} KiB, {jobs} jobs {peak_large} KiB"
    );
    assert!(
        held_ratio <= 2.0,
        "parse + meter is {held_ratio:.2} x the floor"
    );
    assert!(
        ratio <= 2.0,
        "streamed parse + meter is {ratio:.2} x the floor per byte"
    );
    // Streaming: ten times the jobs, the same peak (a page or two of allocator noise allowed).
    assert!(
        peak_large <= peak_small + 1024,
        "peak memory grew from {peak_small} KiB to {peak_large} KiB"
    );
}
