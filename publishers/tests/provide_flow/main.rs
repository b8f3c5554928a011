//! `accelfed provide`'s flow in-process ([`accelfed_publishers::flow::provide_site`]) with real
//! parts: the example site's static services, a Slurm backend whose commands are missing (it
//! fails as a site's does when they are), files in a temporary folder, and a registry address
//! whose listener drops every connection. `keep.rs`: keep-last-good (saved only when complete,
//! published in place of a run that made nothing, only to a consumer of its format and layout);
//! `delivery.rs`: what a run with failures still publishes, and what it reports.

#![allow(clippy::unwrap_used)]

mod delivery;
mod keep;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use accelfed_provider::config::Config;
use accelfed_publishers::Destination;
use accelfed_publishers::flow::{ProvidePlan, ProvideReport, provide_site};
use accelfed_schemas::render::Format;
use accelfed_schemas::render::ldif::Dit;

/// The documentation's example site (static services only).
pub fn example() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    std::fs::read_to_string(path).unwrap()
}

/// `text` plus a Slurm backend whose commands are not in `dir`: it fails on every run.
pub fn with_failing_slurm(text: &str, dir: &Path) -> String {
    let bin = dir.join("no-slurm-here");
    std::fs::create_dir_all(&bin).unwrap();
    format!(
        "{text}\n[[slurm]]\nid = \"gpu-cluster\"\n[slurm.cli]\nbin_dir = {bin:?}\ntimeout_s = 5\n"
    )
}

/// A site whose only backend is the failing Slurm.
pub fn only_failing_slurm(dir: &Path) -> String {
    with_failing_slurm("[site]\nname = \"S\"\n", dir)
}

pub fn config(text: &str) -> Config {
    Config::parse(Path::new("site.toml"), text).unwrap()
}

pub fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
        .unwrap()
        .into()
}

/// A plan that writes `format` to `out` and keeps the last good document at `last`.
pub fn plan<'a>(
    config: &'a Config,
    format: Format,
    dit: Dit,
    out: &Path,
    last: &Path,
) -> ProvidePlan<'a> {
    ProvidePlan {
        config,
        now: now(),
        format,
        dit,
        registry: None,
        write: Some(Destination::File(out.to_owned())),
        keep_last_good: Some(last.to_owned()),
    }
}

pub async fn run(plan: &ProvidePlan<'_>) -> ProvideReport {
    provide_site(plan).await
}

/// The example site's complete run in `format` and `dit`, saved at `dir/last-good`: the saved
/// document and its path.
pub async fn saved(dir: &Path, format: Format, dit: Dit) -> (Vec<u8>, PathBuf) {
    let config = config(&example());
    let out = dir.join("complete.out");
    let last = dir.join("last-good");
    let report = run(&plan(&config, format, dit, &out, &last)).await;
    assert!(report.complete(), "{report:?}");
    let document = std::fs::read(&out).unwrap();
    assert_eq!(
        std::fs::read(&last).unwrap(),
        document,
        "the saved document"
    );
    (document, last)
}
