//! What a site's cron mail and a service's journal show at the default level (no `-v`, no
//! `RUST_LOG`): one summary line per run or request that says what happened, and none of the
//! debug chatter underneath (HTTP/2 frames, each HTTP call).
//!
//! provide: the site, its services and GPUs (physical and slots), where it went and how long it
//! took; meter: records written per backend; ship: batches and records acknowledged; serve: each
//! registry push and each ingested batch, with the site and the counts.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use accelfed_tests::central::{ServeProcess, TOKEN_A, central_config, site};
use accelfed_tests::pki::pki;

/// The binary as cron or systemd runs it: nothing in the environment picks the log level.
fn accelfed() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_accelfed"));
    command
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .env_remove("NO_COLOR");
    command
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The log lines whose message is `message` (text format: `<time>  INFO <message> <fields>`).
fn lines_of<'a>(log: &'a str, message: &str) -> Vec<&'a str> {
    let marker = format!(" INFO {message} ");
    log.lines().filter(|line| line.contains(&marker)).collect()
}

/// Nothing below info reaches the default log.
fn assert_no_debug(log: &str) {
    for level in [" DEBUG ", " TRACE "] {
        assert!(
            !log.contains(level),
            "{level}line at the default level:\n{log}"
        );
    }
}

/// 4 GPUs for a day and 2 for 10 hours, in two months: 2 manual records.
const USAGE: &str = concat!(
    r#"{"resource": "node-1", "model": "A100-SXM4-80GB", "count": 4, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}"#,
    "\n",
    r#"{"resource": "node-2", "model": "H100", "count": 2, "vo": "cms", "start": "2026-02-10T00:00:00Z", "end": "2026-02-10T10:00:00Z"}"#,
    "\n",
);

#[test]
fn provide_says_which_site_how_many_services_and_gpus_and_where_it_went() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let output = accelfed()
        .args(["provide", "--config"])
        .arg(&example)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let log = stderr(&output);
    let published = lines_of(&log, "published");
    assert_eq!(published.len(), 1, "one summary line:\n{log}");
    // The example: a Slurm cluster (8x4 A100, 4x8 H100, one node of 8 H100 as 56 MIG slices)
    // and a cloud with 16 passthrough A100: 88 physical GPUs, 136 slots, in 2 services.
    for field in [
        "site=EXAMPLE-GPU",
        "services=2",
        "gpus=88",
        "gpu_slots=136",
        "format=glue21-json",
        "to=\"stdout\"",
        "elapsed=",
    ] {
        assert!(published[0].contains(field), "{field} in {}", published[0]);
    }
    assert_no_debug(&log);

    // In JSON the counts are numbers, as `bytes` is: a field keeps its type in every line.
    let output = accelfed()
        .args(["provide", "--log-format", "json", "--config"])
        .arg(&example)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let line = stderr(&output)
        .lines()
        .find(|line| line.contains("\"published\""))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no published line in {}", stderr(&output)));
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    let fields = &event["fields"];
    assert_eq!(fields["gpus"].as_f64(), Some(88.0), "{line}");
    assert_eq!(fields["gpu_slots"].as_f64(), Some(136.0), "{line}");
    assert!(fields["bytes"].is_u64(), "{line}");
}

/// central.toml for SITE-A and SITE-B with the registry's HTTPS listener too.
fn central_with_registry(dir: &Path, pki: &accelfed_tests::pki::PkiFiles) -> PathBuf {
    let path = central_config(dir, pki, "path = \"accounting.sqlite\"", "127.0.0.1:0");
    let text = std::fs::read_to_string(&path).unwrap();
    let listeners = "metrics = \"127.0.0.1:0\"\n";
    assert!(text.contains(listeners), "{text}");
    let text = text.replace(listeners, &format!("{listeners}https = \"127.0.0.1:0\"\n"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The example site renamed SITE-A, pushed to the registry at `url`.
fn push(dir: &Path, url: &str, token: &Path, ca: &Path) -> Output {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let text = std::fs::read_to_string(example)
        .unwrap()
        .replace("EXAMPLE-GPU", "SITE-A");
    let config = dir.join("provide.toml");
    std::fs::write(&config, text).unwrap();
    accelfed()
        .args(["provide", "--publish", "registry", "--registry-url", url])
        .arg("--registry-token-file")
        .arg(token)
        .arg("--registry-ca")
        .arg(ca)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap()
}

#[test]
fn meter_ship_and_serve_each_say_what_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let central = central_with_registry(dir.path(), &pki);
    let mut command = accelfed();
    command
        .args(["serve", "--config"])
        .arg(&central)
        .current_dir(dir.path());
    let serve = ServeProcess::spawn(command, &central);
    let grpc = format!("https://localhost:{}", serve.grpc.port());
    let site = site(
        &dir.path().join("site-a"),
        "SITE-A",
        &grpc,
        TOKEN_A,
        &pki,
        USAGE,
        "",
    );

    let metered = accelfed()
        .args(["meter", "--since", "2025-12-01", "--config"])
        .arg(&site.config)
        .output()
        .unwrap();
    assert_eq!(metered.status.code(), Some(0), "{}", stderr(&metered));
    let log = stderr(&metered);
    let manual = lines_of(&log, "read the manual usage");
    assert_eq!(manual.len(), 1, "{log}");
    assert!(manual[0].contains("provider=\"manual\""), "{}", manual[0]);
    assert!(manual[0].contains("observations=2"), "{}", manual[0]);
    let total: Vec<&str> = log
        .lines()
        .filter(|line| line.contains(" INFO metered "))
        .collect();
    assert_eq!(total.len(), 1, "{log}");
    assert!(total[0].contains("records=2"), "{}", total[0]);
    assert!(total[0].contains("by_backend=manual=2"), "{}", total[0]);
    assert_no_debug(&log);

    let shipped = accelfed()
        .args(["ship", "--config"])
        .arg(&site.config)
        .output()
        .unwrap();
    assert_eq!(shipped.status.code(), Some(0), "{}", stderr(&shipped));
    let log = stderr(&shipped);
    let summary = lines_of(&log, "shipped");
    assert_eq!(summary.len(), 1, "{log}");
    // batch_size = 3 in the harness's site.toml: both records travel in one batch.
    for field in ["batches=1", "acknowledged=2", "rejected=0", "pending=0"] {
        assert!(summary[0].contains(field), "{field} in {}", summary[0]);
    }
    assert_no_debug(&log);

    let ingested = serve.log_until(Duration::from_secs(10), |line| {
        line.contains(" INFO batch ingested ")
    });
    let batch: Vec<&String> = ingested
        .iter()
        .filter(|line| line.contains(" INFO batch ingested "))
        .collect();
    assert_eq!(batch.len(), 1, "{ingested:#?}");
    for field in ["site=SITE-A", "stored=2", "unchanged=0", "rejected=0"] {
        assert!(batch[0].contains(field), "{field} in {}", batch[0]);
    }

    let registry = format!("https://localhost:{}", serve.https.unwrap().port());
    let token = dir.path().join("site-a").join("token");
    let pushed = push(dir.path(), &registry, &token, &pki.ca);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let log = stderr(&pushed);
    let published = lines_of(&log, "pushed to the registry");
    assert_eq!(published.len(), 1, "{log}");
    assert!(published[0].contains(&registry), "{}", published[0]);
    for field in ["site=SITE-A", "services=2", "gpus=88", "gpu_slots=136"] {
        assert!(published[0].contains(field), "{field} in {}", published[0]);
    }
    assert_no_debug(&log);
    let stored = serve.log_until(Duration::from_secs(10), |line| {
        line.contains(" INFO registry document stored ")
    });
    let line = stored
        .iter()
        .find(|line| line.contains(" INFO registry document stored "))
        .unwrap_or_else(|| panic!("no push line: {stored:#?}"));
    assert!(line.contains("site=SITE-A"), "{line}");
    let everything = [ingested, stored].concat().join("\n");
    assert_no_debug(&everything);
}

/// The text-format lines at debug level whose message is `message`.
fn debug_lines_of<'a>(log: &'a str, message: &str) -> Vec<&'a str> {
    let marker = format!(" DEBUG {message} ");
    log.lines().filter(|line| line.contains(&marker)).collect()
}

#[test]
fn meter_verbose_shows_each_step_and_the_default_level_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let usage = dir.path().join("usage.jsonl");
    std::fs::write(&usage, USAGE).unwrap();
    let spool = dir.path().join("spool.sqlite");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let meter = |verbose: bool| {
        let mut command = accelfed();
        if verbose {
            command.arg("-v");
        }
        let output = command
            .args(["meter", "--since", "2025-12-01", "--spool"])
            .arg(&spool)
            .arg("--observations")
            .arg(&usage)
            .arg("--config")
            .arg(&example)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stderr(&output)
    };

    let log = meter(true);
    // The plan: where the spool and the manual usage are.
    let plan = debug_lines_of(&log, "metering");
    assert_eq!(plan.len(), 1, "{log}");
    assert!(
        plan[0].contains(&format!("spool={}", spool.display())),
        "{}",
        plan[0]
    );
    assert!(
        plan[0].contains(&format!("manual={}", usage.display())),
        "{}",
        plan[0]
    );
    // Each backend's listing: the example's one backend, `[static]`, meters nothing but lists
    // its installed GPUs (a cluster and a cloud: 88 physical), and says how long that took.
    let listed = debug_lines_of(&log, "backend listed");
    assert_eq!(listed.len(), 1, "{log}");
    for field in [
        "provider=\"static\"",
        "observations=0",
        "installed_gpus=88",
        "installed_read=true",
        "elapsed_ms=",
    ] {
        assert!(listed[0].contains(field), "{field} in {}", listed[0]);
    }
    // The installed GPUs per model the capacity check bounds usage with (8 nodes of 4 A100 in the
    // cluster, 16 A100 PCIe in the cloud).
    let installed = debug_lines_of(&log, "installed GPUs");
    for (model, gpus) in [
        ("NVIDIA A100-SXM4-80GB", "gpus=32"),
        ("NVIDIA A100-PCIE-40GB", "gpus=16"),
    ] {
        let line = installed
            .iter()
            .find(|line| line.contains(&format!("model=\"{model}\"")))
            .unwrap_or_else(|| panic!("no installed line for {model}:\n{log}"));
        assert!(line.contains(gpus), "{gpus} in {line}");
    }
    // The manual usage read, the records built and held, and what the spool took.
    assert_eq!(lines_of(&log, "read the manual usage").len(), 1, "{log}");
    let built = debug_lines_of(&log, "records built");
    assert_eq!(built.len(), 1, "{log}");
    for field in ["observations=2", "records=2", "held=0"] {
        assert!(built[0].contains(field), "{field} in {}", built[0]);
    }
    let summary: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" INFO metered "))
        .collect();
    assert_eq!(summary.len(), 1, "{log}");
    assert!(
        summary[0].contains("records=2") && summary[0].contains("new=2"),
        "{log}"
    );

    // The default level: the summary lines only, none of the steps.
    let log = meter(false);
    for message in [
        "metering",
        "backend listed",
        "installed GPUs",
        "records built",
    ] {
        assert!(
            debug_lines_of(&log, message).is_empty(),
            "{message}:\n{log}"
        );
    }
    assert_no_debug(&log);
    assert_eq!(lines_of(&log, "read the manual usage").len(), 1, "{log}");
}
