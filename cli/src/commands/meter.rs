//! `accelfed meter`: every configured backend's observations (and the manual-usage file) become
//! monthly usage records, written to the spool in one transaction per run.

use std::path::Path;

use chrono::{DateTime, Datelike, TimeZone, Utc};

use accelfed_accounting::apel::ApelCharset;
use accelfed_accounting::apel::safety::{self, Charset};
use accelfed_accounting::config::AccountingConfig;
use accelfed_accounting::meter::{
    Installed, Metered, MeteredResources, meter, read_manual, retractions,
};
use accelfed_accounting::spool::Spool;
use accelfed_provider::config::Config;
use accelfed_schemas::usage::{Observation, Source, UsageRecord};

use crate::args::MeterArgs;
use crate::exit::Outcome;
use crate::progress::Progress;

use super::accounting_site::{load_accounting, open_spool, resolve, spool_path};

/// Where the site feeds APEL, each record is checked before it is spooled against what APEL's
/// loader and database take ([`accelfed_accounting::apel::safety`]): fixable values are
/// normalised (a warning names the record and field), a record APEL would refuse is left out alone
/// (an error names it; the run exits 1), so it never sinks the message it would travel in.
fn apel_safe(
    records: Vec<UsageRecord>,
    charset: ApelCharset,
    partial: &mut bool,
) -> Vec<UsageRecord> {
    let checked = safety::check(records, Charset::from(charset));
    // One line per field at the default level (a site whose users all have accented names
    // would otherwise log every record); each record at debug.
    let mut by_field = std::collections::BTreeMap::<&str, usize>::new();
    for normalised in &checked.normalised {
        *by_field.entry(normalised.field).or_default() += 1;
        tracing::debug!(
            record = %normalised.id,
            resource = %normalised.resource,
            field = normalised.field,
            "normalised for APEL: {}",
            normalised.what
        );
    }
    for (field, records) in by_field {
        tracing::warn!(
            field,
            records,
            "values APEL cannot store were normalised (see docs/operations.md, APEL)"
        );
    }
    for refused in &checked.refused {
        tracing::error!("not spooled, APEL would refuse it: {refused}");
        *partial = true;
    }
    checked.records
}

pub fn run(args: &MeterArgs) -> Outcome {
    let (config, mut accounting) = match load_accounting(&args.config) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    if let Err(err) =
        super::overrides::spool(&args.spool, args.observations.as_deref(), &mut accounting)
    {
        tracing::error!("{err}");
        return Outcome::Config;
    }
    let now = Utc::now();
    let since = args.since.unwrap_or_else(|| previous_month_start(now));
    if since >= now {
        tracing::error!("--since {since} is not in the past");
        return Outcome::Config;
    }
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    let progress = Progress::new();
    let run = Run {
        config: &config,
        accounting: &accounting,
        config_path: &args.config,
        progress: &progress,
        runtime: &runtime,
        since,
        now,
    };
    let observed = run.observe();
    let installed = run.installed();
    let phase = progress.spinner(format!(
        "{} observations cut into monthly records",
        observed.observations.len()
    ));
    let metered = meter(&observed.observations, now, &installed);
    phase.finish_and_clear();
    let mut partial = observed.partial | log_findings(&metered);
    let mut records = metered.records;
    if let Some(apel) = &accounting.apel {
        records = apel_safe(records, apel.charset, &mut partial);
    }
    let written = run.write(records, &metered.resources, &observed);
    match written {
        Some(retraction_failed) if !(partial || retraction_failed) => Outcome::Ok,
        _ => Outcome::Partial,
    }
}

/// One meter run's settings and tools, shared by its steps.
struct Run<'a> {
    config: &'a Config,
    accounting: &'a AccountingConfig,
    config_path: &'a Path,
    progress: &'a Progress,
    runtime: &'a tokio::runtime::Runtime,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
}

/// What the backends and the manual-usage file gave.
struct Observed {
    observations: Vec<Observation>,
    /// A backend failed or a manual line was refused (the run exits 1).
    partial: bool,
    /// A manual line was refused: the records it stood behind are kept, not retracted.
    manual_incomplete: bool,
}

impl Run<'_> {
    /// Every backend's observations since `since`, then the manual-usage file's.
    fn observe(&self) -> Observed {
        let phase = self
            .progress
            .spinner(format!("observing usage since {}", self.since));
        let observed = self.runtime.block_on(accelfed_provider::observe(
            self.config,
            self.since,
            self.now,
        ));
        phase.finish_and_clear();
        let mut found = Observed {
            observations: observed.observations,
            partial: false,
            manual_incomplete: false,
        };
        for failure in &observed.failures {
            tracing::error!(provider = %failure.provider, "meter failed: {}", failure.message);
            found.partial = true;
        }
        let Some(path) = &self.accounting.observations else {
            return found;
        };
        let path = resolve(self.config_path, path);
        match read_manual(&path, &self.config.site.name) {
            Ok(manual) => {
                for err in &manual.refused {
                    tracing::error!("manual usage line not metered: {err}");
                }
                // The manual-usage file's line, as each backend's meter writes its own.
                tracing::info!(
                    provider = "manual",
                    file = %path.display(),
                    observations = manual.observations.len(),
                    refused = manual.refused.len(),
                    "read the manual usage"
                );
                found.manual_incomplete = !manual.refused.is_empty();
                found.partial |= found.manual_incomplete;
                found.observations.extend(manual.observations);
            }
            Err(err) => {
                tracing::error!("manual usage not metered: {err}");
                found.partial = true;
            }
        }
        found
    }

    /// The site's own inventory (what `provide` publishes): it bounds usage per model and month.
    fn installed(&self) -> Installed {
        let phase = self
            .progress
            .spinner("reading the site's GPU inventory".to_owned());
        let gathered = self
            .runtime
            .block_on(accelfed_provider::gather(self.config, self.now));
        phase.finish_and_clear();
        match gathered {
            Ok(gathered) => Installed::from_snapshot(&gathered.snapshot),
            Err(err) => {
                tracing::warn!("GPU inventory not read, usage not checked against capacity: {err}");
                Installed::default()
            }
        }
    }

    /// Writes `records` and the retractions they imply to the spool in one transaction; `None`
    /// when nothing was written, else whether the retractions could not be worked out.
    fn write(
        &self,
        mut records: Vec<UsageRecord>,
        resources: &MeteredResources,
        observed: &Observed,
    ) -> Option<bool> {
        let spool_path = spool_path(self.config_path, self.accounting);
        let mut spool = match open_spool(&spool_path, self.accounting) {
            Ok(spool) => spool,
            Err(err) => {
                tracing::error!("{err}");
                return None;
            }
        };
        let retraction_failed = match retract(&spool, &records, resources, observed) {
            Ok(retracted) => {
                records.extend(retracted);
                false
            }
            Err(err) => {
                tracing::error!("old identities not retracted: {err}");
                true
            }
        };
        let phase = self
            .progress
            .spinner(format!("writing {} records to the spool", records.len()));
        let written = spool.write_run(&records);
        phase.finish_and_clear();
        match written {
            Ok(summary) => {
                tracing::info!(
                    observations = observed.observations.len(),
                    records = records.len(),
                    by_backend = %records_by_backend(&records),
                    new = summary.inserted,
                    updated = summary.updated + summary.reopened,
                    unchanged = summary.unchanged,
                    spool = %spool_path.display(),
                    "metered {} .. {}", self.since, self.now
                );
                Some(retraction_failed)
            }
            Err(err) => {
                tracing::error!("{err}");
                None
            }
        }
    }
}

/// The records written per backend, as the summary line shows them: `openstack=12 manual=3`
/// (backends that wrote none left out; `none` for an empty run). Manual usage is the only source
/// of `static` records, so it is named for the file a site administrator edits.
fn records_by_backend(records: &[UsageRecord]) -> String {
    let mut counts = std::collections::BTreeMap::<Source, usize>::new();
    for record in records {
        *counts.entry(record.source).or_default() += 1;
    }
    if counts.is_empty() {
        return "none".to_owned();
    }
    counts
        .into_iter()
        .map(|(source, records)| {
            let name = match source {
                Source::Static => "manual",
                other => other.as_str(),
            };
            format!("{name}={records}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Logs what the meter refused, capped or found above capacity; whether the run must exit 1.
fn log_findings(metered: &Metered) -> bool {
    for err in &metered.refused {
        tracing::error!("observation not metered: {err}");
    }
    for capped in &metered.capped {
        tracing::warn!(
            record = %capped.identity,
            seconds = capped.seconds,
            month_seconds = capped.month_seconds,
            "periods of one resource overlap: AvailableDuration capped at the month, GPU-seconds kept"
        );
    }
    for overrun in &metered.overruns {
        // The records are still written (the repository's `report --check` must see them too);
        // the exit status says the run found something to fix.
        tracing::error!("usage above installed capacity: {overrun}");
    }
    !(metered.refused.is_empty() && metered.overruns.is_empty())
}

/// Identities a metered resource no longer has this month (a renamed model, a split VO) are
/// retracted: sent again with no duration, so no repository keeps their hours.
fn retract(
    spool: &Spool,
    records: &[UsageRecord],
    resources: &MeteredResources,
    observed: &Observed,
) -> Result<Vec<UsageRecord>, accelfed_accounting::spool::SpoolError> {
    let Some(first) = resources.iter().map(|(_, _, _, month)| *month).min() else {
        return Ok(Vec::new());
    };
    let stored = spool.records_since(first)?;
    let mut retracted = retractions(&stored, records, resources);
    // A refused manual line may be the one that still stands behind a stored record; its hours
    // are kept until the line is fixed.
    if observed.manual_incomplete {
        retracted.retain(|record| record.source != Source::Static);
    }
    for record in &retracted {
        tracing::warn!(
            record = %record.id(),
            identity = %record.identity(),
            "the resource has other records this month now; this one is retracted (0 s)"
        );
    }
    Ok(retracted)
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

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::usage::sample;

    #[test]
    fn records_are_counted_per_backend_with_manual_usage_named_as_such() {
        let mut records = Vec::new();
        for (id, source) in [
            ("vm-1", Source::Openstack),
            ("vm-2", Source::Openstack),
            ("node-1", Source::Static),
            ("job-1", Source::Slurm),
        ] {
            let mut record = sample::record(id);
            record.source = source;
            records.push(record);
        }
        assert_eq!(records_by_backend(&records), "openstack=2 slurm=1 manual=1");
        assert_eq!(records_by_backend(&[]), "none");
    }
}
