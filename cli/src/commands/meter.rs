//! `accelfed meter`: every configured backend's observations (and the manual-usage file) become
//! monthly usage records, written to the spool in one transaction per run.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, TimeZone, Utc};

use accelfed_accounting::meter::{read_manual, records_for};
use accelfed_accounting::spool::Spool;
use accelfed_provider::config::{AccountingConfig, Config};

use crate::args::MeterArgs;
use crate::exit::Outcome;

pub fn run(args: &MeterArgs) -> Outcome {
    let loaded = match Config::load(&args.config) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("error: {err}");
            return Outcome::Config;
        }
    };
    let Some(accounting) = &loaded.config.accounting else {
        eprintln!(
            "error: {}: no [accounting] table (it names the spool; see docs/configuration.md)",
            args.config.display()
        );
        return Outcome::Config;
    };
    let now = Utc::now();
    let since = args.since.unwrap_or_else(|| previous_month_start(now));
    if since >= now {
        eprintln!("error: --since {since} is not in the past");
        return Outcome::Config;
    }
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    let observed = runtime.block_on(accelfed_provider::observe(&loaded.config, since, now));
    let mut partial = false;
    for failure in &observed.failures {
        tracing::error!(provider = %failure.provider, "meter failed: {}", failure.message);
        partial = true;
    }
    let mut observations = observed.observations;
    if let Some(path) = &accounting.observations {
        let path = resolve(&args.config, path);
        match read_manual(&path, &loaded.config.site.name) {
            Ok(manual) => observations.extend(manual),
            Err(err) => {
                tracing::error!("manual usage not metered: {err}");
                partial = true;
            }
        }
    }
    let mut records = Vec::new();
    for observation in &observations {
        match records_for(observation, now) {
            Ok(found) => records.extend(found),
            Err(err) => {
                tracing::error!("observation not metered: {err}");
                partial = true;
            }
        }
    }
    // The same resource seen twice in one run (two backends, a manual line repeating a meter's)
    // would be refused by the spool as a whole; keep the last and say so.
    let records = dedupe(records);
    let spool_path = spool_path(&args.config, accounting);
    let mut spool = match Spool::open(&spool_path) {
        Ok(spool) => spool,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Partial;
        }
    };
    match spool.write_run(&records) {
        Ok(summary) => {
            tracing::info!(
                observations = observations.len(),
                records = records.len(),
                new = summary.inserted,
                updated = summary.updated + summary.reopened,
                unchanged = summary.unchanged,
                spool = %spool_path.display(),
                "metered {since} .. {now}"
            );
        }
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Partial;
        }
    }
    if partial {
        Outcome::Partial
    } else {
        Outcome::Ok
    }
}

fn dedupe(
    records: Vec<accelfed_schemas::usage::UsageRecord>,
) -> Vec<accelfed_schemas::usage::UsageRecord> {
    let mut position = std::collections::HashMap::new();
    let mut kept: Vec<Option<accelfed_schemas::usage::UsageRecord>> = Vec::new();
    for record in records {
        let id = record.id();
        if let Some(&earlier) = position.get(&id) {
            tracing::warn!(record = %id, identity = %record.identity(), "seen twice in one run; the later observation is used");
            kept[earlier] = Some(record);
        } else {
            position.insert(id, kept.len());
            kept.push(Some(record));
        }
    }
    kept.into_iter().flatten().collect()
}

/// The first instant of the month before `now`'s.
fn previous_month_start(now: DateTime<Utc>) -> DateTime<Utc> {
    let (year, month) = if now.month() == 1 {
        (now.year() - 1, 12)
    } else {
        (now.year(), now.month() - 1)
    };
    Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0)
        .single()
        .unwrap_or(now)
}

/// `path` relative to the configuration file's folder.
pub(super) fn resolve(config: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_owned();
    }
    config.parent().unwrap_or_else(|| Path::new(".")).join(path)
}

pub(super) fn spool_path(config: &Path, accounting: &AccountingConfig) -> PathBuf {
    resolve(config, &accounting.spool)
}
