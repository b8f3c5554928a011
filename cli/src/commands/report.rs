//! `accelfed report`: GPU-hours from the accounting repository's summaries, as a table, CSV, JSON
//! or an SVG chart.

use std::path::Path;

use accelfed_accounting::report::{Report, ReportFormat, View, render_svg};
use accelfed_accounting::repository::contacts::SiteHeld;
use accelfed_accounting::repository::{
    Dimension, Period, Repository, RepositoryError, SummaryFilter, SummaryQuery,
};
use accelfed_publishers::Destination;

use crate::args::ReportArgs;
use crate::exit::Outcome;

pub fn run(args: &ReportArgs) -> Outcome {
    if let (Some(from), Some(to)) = (args.from, args.to)
        && from > to
    {
        tracing::error!("--from {from} is after --to {to}");
        return Outcome::Config;
    }
    if args.idle && args.format == ReportFormat::Svg {
        tracing::error!("--idle reports as table, csv or json; the svg chart shows usage");
        return Outcome::Config;
    }
    // A report must not create an empty SQLite repository where the operator mistyped a path.
    if !args.database.contains("://") && !Path::new(&args.database).exists() {
        tracing::error!(
            "no accounting repository at {} (give --database a SQLite file or a postgres:// URL)",
            accelfed_schemas::database_url::redact(&args.database)
        );
        return Outcome::Config;
    }
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    if args.check {
        return check(args, &runtime);
    }
    let document = match runtime.block_on(produce(args)) {
        Ok(document) => document,
        Err(err) => return failed(&err),
    };
    let destination = match &args.output {
        Some(path) => Destination::File(path.clone()),
        None => Destination::Stdout,
    };
    if let Err(err) = runtime.block_on(accelfed_publishers::publish(
        document.as_bytes(),
        &destination,
    )) {
        tracing::error!("{err}");
        return Outcome::Partial;
    }
    Outcome::Ok
}

/// `report --check`: one line per breach on standard output, a summary on standard error.
fn check(args: &ReportArgs, runtime: &tokio::runtime::Runtime) -> Outcome {
    if args.vo.is_some() {
        // Capacity is shared by every VO: a bound checked on one VO's hours proves nothing.
        tracing::warn!("--check sums every VO; --vo is ignored");
    }
    let filter = SummaryFilter {
        vo: None,
        ..filter(args)
    };
    let checked = runtime.block_on(async {
        let repository = Repository::open_read_only(&args.database).await?;
        let found = repository.capacity_check(filter).await?;
        let held = repository.held_records().await?;
        Ok::<_, RepositoryError>((found, held))
    });
    let (found, mut held) = match checked {
        Ok(checked) => checked,
        Err(err) => return failed(&err),
    };
    if let Some(site) = &args.site {
        held.retain(|held| held.site == *site);
    }
    let mut text = String::new();
    for breach in &found.breaches {
        text.push_str(&format!("over capacity: {breach}\n"));
    }
    text.push_str(&held_lines(&held));
    let destination = match &args.output {
        Some(path) => Destination::File(path.clone()),
        None => Destination::Stdout,
    };
    if let Err(err) = runtime.block_on(accelfed_publishers::publish(text.as_bytes(), &destination))
    {
        tracing::error!("{err}");
        return Outcome::Partial;
    }
    if found.unchecked > 0 {
        tracing::warn!(
            unchecked = found.unchecked,
            "site-month-models whose records carry no installed GPU count were not checked"
        );
    }
    let held_total: u64 = held.iter().map(|site| site.total).sum();
    if held_total > 0 {
        tracing::error!(
            held = held_total,
            sites = held.len(),
            "records held back at sites (their capacity check doubts them): release or correct them there"
        );
    }
    if found.breaches.is_empty() {
        tracing::info!(checked = found.checked, "usage within installed capacity");
    } else {
        tracing::error!(
            breaches = found.breaches.len(),
            checked = found.checked,
            "usage above installed capacity"
        );
    }
    if found.breaches.is_empty() && held_total == 0 {
        Outcome::Ok
    } else {
        Outcome::Partial
    }
}

/// One line per record a site holds back, as its last `ship` reported them, and one for those
/// past the listed ones.
fn held_lines(held: &[SiteHeld]) -> String {
    let mut text = String::new();
    for site in held {
        for record in &site.records {
            text.push_str(&format!(
                "held at {}: {} since {}: {}\n",
                site.site,
                record.record_id,
                record
                    .since
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                record.reason
            ));
        }
        let unlisted = site.total.saturating_sub(site.records.len() as u64);
        if unlisted > 0 {
            text.push_str(&format!(
                "held at {}: {unlisted} more (`accelfed spool held` at the site lists them)\n",
                site.site
            ));
        }
    }
    text
}

fn filter(args: &ReportArgs) -> SummaryFilter {
    SummaryFilter {
        from: args.from,
        to: args.to,
        vo: args.vo.clone(),
        site: args.site.clone(),
        model: args.model.clone(),
    }
}

/// A file that is not a repository is a usage error (exit 2); a database that fails is exit 1.
fn failed(err: &RepositoryError) -> Outcome {
    tracing::error!("{err}");
    match err {
        RepositoryError::NotARepository { .. } | RepositoryError::SchemaTooNew { .. } => {
            Outcome::Config
        }
        _ => Outcome::Partial,
    }
}

async fn produce(args: &ReportArgs) -> Result<String, RepositoryError> {
    let repo = Repository::open_read_only(&args.database).await?;
    let filter = filter(args);
    let document = match args.format {
        ReportFormat::Text(format) => {
            let rows = repo
                .summaries(SummaryQuery {
                    group_by: args.by.dimensions().to_vec(),
                    filter,
                })
                .await?;
            Report::from_rows(args.by.clone(), args.from, args.to, &rows)
                .with_current_month(Period::of(chrono::Utc::now()))
                .with_view(if args.idle { View::Idle } else { View::Usage })
                .render(format)
        }
        ReportFormat::Svg => {
            // The chart always runs along months; its series are the first --by groups.
            let series = args.by.first();
            let mut group_by = vec![series];
            if series != Dimension::Month {
                group_by.push(Dimension::Month);
            }
            let rows = repo.summaries(SummaryQuery { group_by, filter }).await?;
            render_svg(series, &rows, args.from, args.to)
        }
    };
    tracing::info!(by = %args.by, format = %args.format, idle = args.idle, bytes = document.len(), "report");
    Ok(document)
}
