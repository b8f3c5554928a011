//! Caps on how many distinct VOs and GPU models one site may report in one month. Every distinct
//! VO is a summary row, a chart series and a line in every report; a site (or a stolen token)
//! that sent 70,000 invented VO names in two calls made the public page 47.8 MB (issue #30). A
//! record that would bring its site's month past a cap is refused alone (`bad_field`, naming the
//! value, the month and the setting), the rest of its batch stored; values the site has already
//! reported that month always pass. What a site reported is read from the repository's summaries
//! (one query per month and dimension a call touches), so every `serve` instance on one database
//! counts the same.

use std::collections::{BTreeMap, HashSet};

use accelfed_accounting::repository::{
    Dimension, Period, Repository, RepositoryError, SummaryFilter, SummaryQuery,
};
use accelfed_accounting::wire::{Rejection, Submission};
use accelfed_schemas::names::SiteName;
use accelfed_schemas::usage::UsageRecord;

/// Distinct VOs one site may report in one month, unless configured.
pub const DEFAULT_MAX_VOS_PER_MONTH: usize = 1_000;
/// Distinct GPU models one site may report in one month, unless configured.
pub const DEFAULT_MAX_MODELS_PER_MONTH: usize = 100;

/// `[ingest] max_vos_per_month` and `max_models_per_month`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistinctCaps {
    pub vos: usize,
    pub models: usize,
}

impl Default for DistinctCaps {
    fn default() -> Self {
        Self {
            vos: DEFAULT_MAX_VOS_PER_MONTH,
            models: DEFAULT_MAX_MODELS_PER_MONTH,
        }
    }
}

/// What a site already reported in one month.
#[derive(Debug, Default)]
struct Known {
    vos: HashSet<String>,
    models: HashSet<String>,
}

/// Replaces each record of `batch` that would bring `site`'s month past `caps` by its refusal.
pub async fn screen(
    repository: &Repository,
    site: &SiteName,
    batch: &mut [Submission],
    caps: DistinctCaps,
) -> Result<(), RepositoryError> {
    let mut months: BTreeMap<Period, Known> = BTreeMap::new();
    for submission in batch.iter() {
        if let Submission::Record(record) = submission
            && let Some(period) = period_of(record)
            && !months.contains_key(&period)
        {
            let known = Known {
                vos: reported(repository, site, period, Dimension::Vo).await?,
                models: reported(repository, site, period, Dimension::Model).await?,
            };
            months.insert(period, known);
        }
    }
    for submission in batch.iter_mut() {
        let Submission::Record(record) = submission else {
            continue;
        };
        let Some(known) = period_of(record).and_then(|period| months.get_mut(&period)) else {
            continue;
        };
        let vo = record.vo.as_ref().map(|vo| vo.as_str()).unwrap_or_default();
        let refusal = admit(
            &mut known.vos,
            vo,
            caps.vos,
            "VO",
            "max_vos_per_month",
            record,
        )
        .or_else(|| {
            admit(
                &mut known.models,
                record.model.as_str(),
                caps.models,
                "GPU model",
                "max_models_per_month",
                record,
            )
        });
        if let Some(detail) = refusal {
            *submission = Submission::Invalid(Rejection::BadField { detail });
        }
    }
    Ok(())
}

fn period_of(record: &UsageRecord) -> Option<Period> {
    Period::new(record.month.year(), record.month.month()).ok()
}

/// Adds `value` to `known` when it is known or there is room; otherwise the refusal's detail.
fn admit(
    known: &mut HashSet<String>,
    value: &str,
    cap: usize,
    what: &str,
    setting: &str,
    record: &UsageRecord,
) -> Option<String> {
    if known.contains(value) {
        return None;
    }
    if known.len() >= cap {
        return Some(format!(
            "record {}: {what} {:?} would be distinct {what} number {} of site {} in {}-{:02}, \
             past [ingest] {setting} = {cap}",
            record.associated_record.as_str(),
            accelfed_schemas::excerpt::excerpt(value),
            cap + 1,
            record.site.as_str(),
            record.month.year(),
            record.month.month()
        ));
    }
    known.insert(value.to_owned());
    None
}

/// The values of `dimension` that `site` reported in `period`.
async fn reported(
    repository: &Repository,
    site: &SiteName,
    period: Period,
    dimension: Dimension,
) -> Result<HashSet<String>, RepositoryError> {
    let rows = repository
        .summaries(SummaryQuery {
            group_by: vec![dimension],
            filter: SummaryFilter {
                from: Some(period),
                to: Some(period),
                site: Some(site.as_str().to_owned()),
                ..SummaryFilter::default()
            },
        })
        .await?;
    Ok(rows
        .iter()
        .map(|row| row.key.get(dimension).unwrap_or_default())
        .collect())
}
