//! `accelfed meter`: every configured backend's observations (and the manual-usage file) become
//! monthly usage records, written to the spool in one transaction per run.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, TimeZone, Utc};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use accelfed_accounting::apel::ApelCharset;
use accelfed_accounting::apel::safety::{self, Charset};
use accelfed_accounting::config::AccountingConfig;
use accelfed_accounting::meter::{Installed, meter, read_manual, retractions};
use accelfed_accounting::spool::Spool;
use accelfed_provider::config::Config;
use accelfed_schemas::usage::{Source, UsageRecord};

use crate::args::MeterArgs;
use crate::exit::Outcome;
use crate::site_file::SiteFile;

/// Where the site feeds APEL, each record is checked before it is spooled against what APEL's
/// loader and database take ([`accelfed_accounting::apel::safety`]): fixable values are
/// normalised (a warning names the record and field), a record APEL would refuse is left out alone
/// (an error names it; the run exits 1), so it never sinks the message it would travel in.
fn apel_safe(
    records: Vec<UsageRecord>,
    charset: ApelCharset,
    partial: &mut bool,
) -> Vec<UsageRecord> {
    let charset = match charset {
        ApelCharset::Utf8 => Charset::Utf8mb3,
        ApelCharset::Latin1 => Charset::Latin1,
    };
    let checked = safety::check(records, charset);
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
        eprintln!("error: {err}");
        return Outcome::Config;
    }
    let accounting = &accounting;
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
    let progress = Progress::new();
    let phase = progress.spinner(format!("observing usage since {since}"));
    let observed = runtime.block_on(accelfed_provider::observe(&config, since, now));
    phase.finish_and_clear();
    let mut partial = false;
    for failure in &observed.failures {
        tracing::error!(provider = %failure.provider, "meter failed: {}", failure.message);
        partial = true;
    }
    let mut observations = observed.observations;
    let mut manual_incomplete = false;
    if let Some(path) = &accounting.observations {
        let path = resolve(&args.config, path);
        match read_manual(&path, &config.site.name) {
            Ok(manual) => {
                for err in &manual.refused {
                    tracing::error!("manual usage line not metered: {err}");
                }
                manual_incomplete = !manual.refused.is_empty();
                partial |= manual_incomplete;
                observations.extend(manual.observations);
            }
            Err(err) => {
                tracing::error!("manual usage not metered: {err}");
                partial = true;
            }
        }
    }
    // The site's own inventory (what `provide` publishes) bounds its usage per model and month.
    let phase = progress.spinner("reading the site's GPU inventory".to_owned());
    let installed = match runtime.block_on(accelfed_provider::gather(&config, now)) {
        Ok(gathered) => Installed::from_snapshot(&gathered.snapshot),
        Err(err) => {
            tracing::warn!("GPU inventory not read, usage not checked against capacity: {err}");
            Installed::default()
        }
    };
    phase.finish_and_clear();
    let phase = progress.spinner(format!(
        "{} observations cut into monthly records",
        observations.len()
    ));
    let metered = meter(&observations, now, &installed);
    phase.finish_and_clear();
    for err in &metered.refused {
        tracing::error!("observation not metered: {err}");
        partial = true;
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
        partial = true;
    }
    let mut records = metered.records;
    if let Some(apel) = &accounting.apel {
        records = apel_safe(records, apel.charset, &mut partial);
    }
    let spool_path = spool_path(&args.config, accounting);
    let mut spool = match Spool::open(&spool_path) {
        Ok(spool) => spool,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Partial;
        }
    };
    // Identities a metered resource no longer has this month (a renamed model, a split VO) are
    // retracted: sent again with no duration, so no repository keeps their hours.
    if let Some(first) = metered
        .resources
        .iter()
        .map(|(_, _, _, month)| *month)
        .min()
    {
        match spool.records_since(first) {
            Ok(stored) => {
                let mut retracted = retractions(&stored, &records, &metered.resources);
                // A refused manual line may be the one that still stands behind a stored record;
                // its hours are kept until the line is fixed.
                if manual_incomplete {
                    retracted.retain(|record| record.source != Source::Static);
                }
                for record in &retracted {
                    tracing::warn!(
                        record = %record.id(),
                        identity = %record.identity(),
                        "the resource has other records this month now; this one is retracted (0 s)"
                    );
                }
                records.extend(retracted);
            }
            Err(err) => {
                tracing::error!("old identities not retracted: {err}");
                partial = true;
            }
        }
    }
    let phase = progress.spinner(format!("writing {} records to the spool", records.len()));
    let written = spool.write_run(&records);
    phase.finish_and_clear();
    match written {
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

/// The site configuration and its `[accounting]` table (read by accelfed-accounting), or, printed, why not and
/// the exit status: every accounting command (meter, ship, export) starts here.
pub(super) fn load_accounting(path: &Path) -> Result<(Config, AccountingConfig), Outcome> {
    let file = match SiteFile::load(path) {
        Ok(file) => file,
        Err(err) => {
            eprintln!("error: {err}");
            return Err(Outcome::Config);
        }
    };
    match file.accounting {
        Some(accounting) => Ok((file.loaded.config, accounting)),
        None => {
            eprintln!(
                "error: {}: no [accounting] table (it names the spool; see docs/configuration.md)",
                path.display()
            );
            Err(Outcome::Config)
        }
    }
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

/// What a person at a terminal sees while a long backfill runs: a spinner while the backends are
/// asked, while observations become records and while the spool is written. Drawn
/// only when standard error is a terminal and `-q` was not given; under cron (no terminal) and
/// with `-q` every bar is hidden and nothing is written.
struct Progress {
    visible: bool,
}

impl Progress {
    fn new() -> Self {
        use std::io::IsTerminal;
        // -q sets the log level to errors only; a bar is not an error.
        let quiet = tracing::level_filters::LevelFilter::current()
            < tracing::level_filters::LevelFilter::WARN;
        Self {
            visible: std::io::stderr().is_terminal() && !quiet,
        }
    }

    fn target(&self) -> ProgressDrawTarget {
        if self.visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        }
    }

    fn spinner(&self, message: String) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, self.target()).with_message(message);
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    }
}
