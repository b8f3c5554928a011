//! `accelfed meter`: resolves the plan from the site file and flags, runs the library's flow
//! ([`accelfed_accounting::flow::meter_site`]) and maps its report to log lines and an exit status.

use std::future::Future;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use tokio::sync::oneshot;

use accelfed_accounting::flow::{AgentsRead, ManualRead, MeterPlan, MeterReport, meter_site};
use accelfed_accounting::spool::{Spool, SpoolError};
use accelfed_schemas::usage::Source;

use crate::args::MeterArgs;
use crate::exit::Outcome;
use crate::progress::Progress;

use super::accounting_site::{load_accounting, open_spool, resolve, spool_failure, spool_path};

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
    let plan = MeterPlan {
        config: &config,
        accounting: &accounting,
        manual: accounting
            .observations
            .as_ref()
            .map(|path| resolve(&args.config, path)),
        agents: accounting
            .agents
            .as_ref()
            .map(|agents| resolve(&args.config, &agents.documents)),
        spool: spool_path(&args.config, &accounting),
        since,
        now,
    };
    tracing::debug!(
        spool = %plan.spool.display(),
        manual = %plan.manual.as_deref().map_or_else(|| "none".into(), |p| p.display().to_string()),
        backends = config.providers().len(),
        since = %plan.since,
        now = %plan.now,
        "metering"
    );
    let progress = Progress::new();
    let phase = progress.spinner(format!("metering usage since {since}"));
    // The spool is checked beside the meter's first calls rather than before them: opening it
    // (its file made, its schema written and synced) is then off the run's wall. A mistyped path
    // or a spool another user owns is still a configuration error (exit 2), found without
    // metering for nothing: the calls in flight are dropped before anything is metered or
    // written.
    let checked = std::thread::scope(|scope| {
        let (sender, receiver) = oneshot::channel();
        scope.spawn(|| {
            // A meter that already ended listens no more; the spool is then closed here.
            let _unheard = sender.send(open_spool(&plan.spool, &accounting));
        });
        runtime.block_on(meter_checked(receiver, meter_site(&plan)))
    });
    phase.finish_and_clear();
    let report = match checked {
        Ok(report) => report,
        Err(err) => {
            tracing::error!("{err}");
            return spool_failure(&err);
        }
    };
    log(&report);
    Outcome::finished(!report.complete())
}

/// `meter`'s report, unless the spool check (`checked`) fails first. The checked spool stays open
/// until the meter has written, so SQLite does not checkpoint it in between.
async fn meter_checked(
    mut checked: oneshot::Receiver<Result<Spool, SpoolError>>,
    meter: impl Future<Output = MeterReport>,
) -> Result<MeterReport, SpoolError> {
    tokio::pin!(meter);
    tokio::select! {
        biased;
        opened = &mut checked => match opened {
            Ok(Ok(spool)) => {
                let report = meter.await;
                drop(spool);
                Ok(report)
            }
            Ok(Err(err)) => Err(err),
            // The check's thread ended without an answer: the meter's own write opens the spool.
            Err(_) => Ok(meter.await),
        },
        report = &mut meter => match checked.await {
            Ok(Err(err)) => Err(err),
            _ => Ok(report),
        },
    }
}

/// The report as log lines: what failed or needs an operator at error or warning level, the
/// run's summary line at info.
fn log(report: &MeterReport) {
    if report.nothing_to_meter() {
        tracing::warn!(
            "nothing to meter: no configured backend meters usage ([static] services do not) and \
             there is no manual-usage file (accounting.observations); see docs/operations.md"
        );
    }
    for failure in &report.failures {
        let retry = failure.retry.may_help();
        tracing::error!(provider = %failure.provider, retry, "meter failed: {}", failure.message);
    }
    for uncounted in &report.uncounted {
        tracing::warn!(
            provider = %uncounted.provider,
            models = uncounted.models.len(),
            "installed GPUs not read, usage of its models not checked against capacity: {}",
            uncounted.message
        );
    }
    match &report.manual {
        Some(ManualRead::Read {
            path,
            observations,
            refused,
        }) => {
            for err in refused {
                tracing::error!("manual usage line not metered: {err}");
            }
            // The manual-usage file's line, as each backend's meter writes its own.
            tracing::info!(
                provider = "manual",
                file = %path.display(),
                observations,
                refused = refused.len(),
                "read the manual usage"
            );
        }
        Some(ManualRead::Unread(err)) => tracing::error!("manual usage not metered: {err}"),
        None => {}
    }
    match &report.agents {
        Some(AgentsRead::Read {
            folder,
            documents,
            matched,
            refused,
            kept,
        }) => {
            for problem in refused {
                tracing::error!("agent document not used: {problem}");
            }
            tracing::info!(
                folder = %folder.display(),
                documents,
                matched,
                refused = refused.len(),
                kept,
                "read the node agents' documents"
            );
        }
        Some(AgentsRead::Unread(problem)) => {
            tracing::error!("agent documents not read, nothing metered: {problem}");
        }
        None => {}
    }
    log_findings(report);
    match &report.retracted {
        Ok(retracted) => {
            for record in retracted {
                tracing::warn!(
                    record = %record.id(),
                    identity = %record.identity(),
                    "the resource has other records this month now; this one is retracted (0 s)"
                );
            }
        }
        Err(err) => tracing::error!("old identities not retracted: {err}"),
    }
    match &report.written {
        Ok(written) => tracing::info!(
            observations = report.observed,
            records = written.by_source.values().sum::<usize>(),
            by_backend = %by_backend(&written.by_source),
            new = written.summary.inserted,
            updated = written.summary.updated + written.summary.reopened,
            unchanged = written.summary.unchanged,
            held = written.summary.holds.held,
            released = written.summary.holds.released,
            spool = %written.spool.display(),
            "metered {} .. {}", report.since, report.now
        ),
        Err(err) => tracing::error!("{err}"),
    }
}

/// What the meter refused, capped, normalised or held back.
fn log_findings(report: &MeterReport) {
    for err in &report.refused {
        tracing::error!("observation not metered: {err}");
    }
    for capped in &report.capped {
        tracing::warn!(
            record = %capped.identity,
            seconds = capped.seconds,
            month_seconds = capped.month_seconds,
            "periods of one resource overlap: AvailableDuration capped at the month, GPU-seconds kept"
        );
    }
    for overrun in &report.overruns {
        tracing::error!(
            "usage above installed capacity, its records held back (accelfed spool held; \
             fix the source and meter again, or accelfed spool release): {overrun}"
        );
    }
    for (id, reason) in &report.held {
        tracing::debug!(record = %id, "held back: {reason}");
    }
    // One line per field at the default level (a site whose users all have accented names
    // would otherwise log every record); each record at debug.
    let mut by_field = std::collections::BTreeMap::<&str, usize>::new();
    for normalised in &report.normalised {
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
    for refused in &report.apel_refused {
        tracing::error!("not spooled, APEL would refuse it: {refused}");
    }
}

/// The records written per backend, as the summary line shows them: `openstack=12 manual=3`
/// (backends that wrote none left out; `none` for an empty run). Manual usage is the only source
/// of `static` records, so it is named for the file a site administrator edits.
fn by_backend(counts: &std::collections::BTreeMap<Source, usize>) -> String {
    if counts.is_empty() {
        return "none".to_owned();
    }
    counts
        .iter()
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

    #[test]
    fn records_are_counted_per_backend_with_manual_usage_named_as_such() {
        let counts = [
            (Source::Openstack, 2),
            (Source::Static, 1),
            (Source::Slurm, 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(by_backend(&counts), "openstack=2 slurm=1 manual=1");
        assert_eq!(by_backend(&Default::default()), "none");
    }
}
