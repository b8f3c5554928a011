//! Kill tests: `accelfed meter`, `accelfed ship` and the ingest of `accelfed serve` are killed with
//! SIGKILL at random instants, 1,000 kills in all, then run to completion: the repository's
//! per-VO GPU-hours and record counts equal what the usage file says, exactly (nothing lost,
//! nothing counted twice).
//!
//! Each round changes every record (and adds resources), so every round has a full spool of new
//! versions to write and ship. Delays are drawn from a seeded generator: a failure names its seed
//! and round, and `ACCELFED_KILL_SEED=<seed>` replays it. `ACCELFED_KILLS=<n>` runs a shorter or
//! longer test (default 1,000). The test meter is the manual-usage file, as in
//! cli/tests/accounting.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use accelfed_schemas::usage::Month;
// `accelfed serve` runs as a process of its own here, not in-process: killing it with SIGKILL
// mid-ingest is what this test does.
use accelfed_tests::central::{ServeProcess as Server, *};
use accelfed_tests::pki::pki;

const ROUNDS: u64 = 10;
const VOS: [&str; 3] = ["atlas", "cms", "lhcb"];

/// splitmix64: small, seedable, good enough to spread delays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, max)`.
    fn below(&mut self, max: Duration) -> Duration {
        let micros = u64::try_from(max.as_micros()).unwrap().max(1);
        Duration::from_micros(self.next() % micros)
    }
}

/// The usage of round `round`: `20 + 8 * round` resources, each held for a number of hours that
/// changes with `round` and `variant`; every seventh crosses from January into February (two
/// records, both always present since it lasts at least two hours).
fn usage(round: u64, variant: u64) -> (String, BTreeMap<String, f64>, u64) {
    let mut lines = Vec::new();
    let mut hours_by_vo: BTreeMap<String, f64> = BTreeMap::new();
    let mut records = 0;
    for i in 0..20 + 8 * round {
        let vo = VOS[usize::try_from(i % 3).unwrap()];
        let (start, hours) = if i % 7 == 0 {
            records += 2;
            (
                "2026-01-31T23:00:00Z".to_owned(),
                2 + (i + round + variant) % 3,
            )
        } else {
            records += 1;
            (
                format!("2026-01-{:02}T00:00:00Z", 2 + i % 25),
                1 + (i + round + variant) % 4,
            )
        };
        let start_time = chrono::DateTime::parse_from_rfc3339(&start).unwrap();
        let end = (start_time + chrono::Duration::hours(i64::try_from(hours).unwrap()))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        lines.push(format!(
            r#"{{"resource": "node-{i:04}", "model": "A100", "count": 1, "vo": "{vo}", "start": "{start}", "end": "{end}"}}"#
        ));
        *hours_by_vo.entry(vo.to_owned()).or_default() += hours as f64;
    }
    (lines.join("\n") + "\n", hours_by_vo, records)
}

struct Rig {
    _dir: tempfile::TempDir,
    central: std::path::PathBuf,
    repository: std::path::PathBuf,
    site: Site,
    server: Option<Server>,
    rng: Rng,
    seed: u64,
    kills: BTreeMap<&'static str, usize>,
    /// Per kind of kill, the window its random delays are drawn from.
    windows: BTreeMap<&'static str, Duration>,
}

impl Rig {
    fn command(&self, subcommand: &str) -> Child {
        let mut command = accelfed();
        command.arg(subcommand);
        if subcommand == "meter" {
            command.args(["--since", "2025-12-01"]);
        }
        command
            .arg("--config")
            .arg(&self.site.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Runs `subcommand` to completion; returns how long it took.
    fn complete(&mut self, subcommand: &str, context: &str) -> Duration {
        let started = Instant::now();
        let output = accelfed()
            .arg(subcommand)
            .args(if subcommand == "meter" {
                &["--since", "2025-12-01"][..]
            } else {
                &[][..]
            })
            .arg("--config")
            .arg(&self.site.config)
            .output()
            .unwrap();
        assert_eq!(
            status(&output),
            0,
            "seed {:#x}, {context}: {subcommand} after kills failed: {}",
            self.seed,
            stderr(&output)
        );
        started.elapsed()
    }

    /// Starts `subcommand` and kills it (SIGKILL) after a random delay below the current window;
    /// true when the process was still running, i.e. the kill landed. A kill that came too late
    /// shrinks the window, one that landed widens it a little (machines differ and so does load).
    fn kill_once(&mut self, subcommand: &'static str) -> bool {
        let mut child = self.command(subcommand);
        std::thread::sleep(self.rng.below(self.window(subcommand)));
        let landed = child.try_wait().unwrap().is_none();
        if landed {
            child.kill().unwrap();
        }
        child.wait().unwrap();
        self.landed(subcommand, landed)
    }

    /// Starts `ship`, kills the server after a random delay below the window, lets `ship` end (it
    /// fails or finishes) and starts the server again on the same port; true when `ship` was
    /// still running when the server died.
    fn kill_server_once(&mut self) -> bool {
        let mut shipping = self.command("ship");
        std::thread::sleep(self.rng.below(self.window("serve")));
        let landed = shipping.try_wait().unwrap().is_none();
        drop(self.server.take()); // SIGKILL, then wait.
        shipping.wait().unwrap();
        self.server = Some(Server::start(&self.central));
        self.landed("serve", landed)
    }

    fn window(&self, kind: &str) -> Duration {
        self.windows[kind]
    }

    fn landed(&mut self, kind: &'static str, landed: bool) -> bool {
        let window = self.windows.get_mut(kind).unwrap();
        *window = if landed {
            window.mul_f64(1.05)
        } else {
            window.mul_f64(0.7)
        };
        if landed {
            *self.kills.entry(kind).or_default() += 1;
        }
        landed
    }

    /// Repeats `attempt` until `count` kills landed (at most 4 tries per kill).
    fn kills(
        &mut self,
        kind: &'static str,
        count: u64,
        mut attempt: impl FnMut(&mut Self) -> bool,
    ) {
        let mut landed = 0;
        for _ in 0..count * 4 {
            if landed == count {
                return;
            }
            if attempt(self) {
                landed += 1;
            }
        }
        panic!(
            "seed {:#x}: {kind}: only {landed} of {count} kills landed on a running process",
            self.seed
        );
    }

    /// Makes every record pending again when nothing is, so a ship always has work for the
    /// repository to be killed in.
    fn keep_pending(&self) {
        let mut spool = accelfed_accounting::spool::Spool::open(&self.site.spool).unwrap();
        if spool.depth().unwrap() == 0 {
            for month in [1, 2] {
                spool
                    .reopen_month(Month::new(2026, month).unwrap())
                    .unwrap();
            }
        }
    }

    fn assert_totals(&self, round: u64, expected: &BTreeMap<String, f64>, records: u64) {
        let (rows, total) = report_by_vo(self.repository.to_str().unwrap());
        let found: BTreeMap<String, f64> = rows.iter().map(|(vo, h, _)| (vo.clone(), *h)).collect();
        let found_records: u64 = rows.iter().map(|(_, _, r)| r).sum();
        assert_eq!(
            &found, expected,
            "seed {:#x}, round {round}: per-VO GPU-hours after kills {:?}",
            self.seed, self.kills
        );
        assert_eq!(total, expected.values().sum::<f64>());
        assert_eq!(
            found_records, records,
            "seed {:#x}, round {round}: records in the repository",
            self.seed
        );
    }
}

#[test]
fn killed_meter_ship_and_serve_resume_to_exact_totals() {
    let seed = std::env::var("ACCELFED_KILL_SEED")
        .ok()
        .map(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap())
        .unwrap_or(0x5eed_acc0);
    let total: u64 = std::env::var("ACCELFED_KILLS")
        .ok()
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000);
    // Per round: 40% meter, 30% ship, 30% serve.
    let per_round = total.div_ceil(ROUNDS);
    let (meter_kills, ship_kills) = (per_round * 4 / 10, per_round * 3 / 10);
    let serve_kills = per_round - meter_kills - ship_kills;
    eprintln!("kill test: seed {seed:#x} (ACCELFED_KILL_SEED to replay), {total} kills");

    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let repository = dir.path().join("accounting.sqlite");
    let central = central_config(
        dir.path(),
        &pki,
        &format!("path = \"{}\"", repository.display()),
        &format!("127.0.0.1:{port}"),
    );
    let site = site(
        &dir.path().join("site"),
        "SITE-A",
        &format!("https://localhost:{port}"),
        TOKEN_A,
        &pki,
        &usage(0, 0).0,
        "",
    );
    let server = Server::start(&central);
    let mut rig = Rig {
        central,
        repository,
        site,
        server: Some(server),
        rng: Rng(seed),
        seed,
        kills: BTreeMap::new(),
        windows: BTreeMap::new(),
        _dir: dir,
    };
    let usage_file = rig.site.config.parent().unwrap().join("usage.jsonl");
    let started = Instant::now();
    let mut killed = 0;
    for round in 0..ROUNDS {
        let (text, expected, records) = usage(round, 0);
        std::fs::write(&usage_file, text).unwrap();
        let context = format!("round {round}");

        // Calibrate: how long a full run takes now. Then each killed run meets a usage file that
        // differs from the spool (alternating with another round's values), so there is always
        // a run's worth of changes to be killed in the middle of.
        let meter_time = rig.complete("meter", &context);
        rig.windows.entry("meter").or_insert(meter_time);
        let mut variant = 0;
        rig.kills("meter", meter_kills, |rig| {
            variant += 1;
            std::fs::write(&usage_file, usage(round, 1 + variant % 2).0).unwrap();
            rig.kill_once("meter")
        });
        std::fs::write(&usage_file, usage(round, 0).0).unwrap();
        rig.complete("meter", &context);

        rig.keep_pending();
        let ship_time = rig.complete("ship", &context);
        rig.windows.entry("ship").or_insert(ship_time);
        rig.windows.entry("serve").or_insert(ship_time);
        rig.kills("ship", ship_kills, |rig| {
            rig.keep_pending();
            rig.kill_once("ship")
        });
        rig.kills("serve", serve_kills, |rig| {
            rig.keep_pending();
            rig.kill_server_once()
        });
        rig.complete("ship", &context);
        assert_eq!(rig.site.spool_depth(), 0, "seed {seed:#x}, {context}");
        rig.assert_totals(round, &expected, records);
        killed = rig.kills.values().sum::<usize>();
        eprintln!(
            "round {round}: {:?} kills so far, {:.1} s",
            rig.kills,
            started.elapsed().as_secs_f64()
        );
    }
    assert!(killed as u64 >= total, "seed {seed:#x}: {:?}", rig.kills);
}

/// `usage` itself: the expected totals are what the lines say.
#[test]
fn usage_totals_follow_the_lines() {
    let (text, hours, records) = usage(0, 0);
    assert_eq!(text.lines().count(), 20);
    assert_eq!(records, 20 + 3);
    assert_eq!(hours.values().sum::<f64>(), {
        let mut sum = 0.0;
        for i in 0..20u64 {
            sum += if i % 7 == 0 { 2 + i % 3 } else { 1 + i % 4 } as f64;
        }
        sum
    });
}
