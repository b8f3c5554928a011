//! Caps on how many distinct VOs, users and GPU models one site may report in one month. Every
//! distinct VO is a summary row, a chart series and a line in every report; a site (or a stolen
//! token) that sent 70,000 invented VO names in two calls made the public page 47.8 MB (issue
//! #30); invented user names grow the repository's user index and every per-user report. A
//! record that would bring its site's month past a cap is refused alone (`bad_field`, naming the
//! value, the month and the setting), the rest of its batch stored; values the site has already
//! reported that month always pass. What a site reported is read from the repository's summaries
//! (one query per month and dimension a call touches), users from the records' user index (they are
//! not in the summaries), so every `serve` instance on one database counts the same. A record
//! without a user is not counted against the users cap.

use std::collections::{BTreeMap, HashSet};

use accelfed_accounting::repository::{
    Dimension, Period, Repository, RepositoryError, SummaryFilter, SummaryQuery,
};
use accelfed_accounting::wire::{Rejection, Submission};
use accelfed_schemas::names::SiteName;
use accelfed_schemas::usage::UsageRecord;

/// Distinct VOs one site may report in one month, unless configured.
pub const DEFAULT_MAX_VOS_PER_MONTH: usize = 1_000;
/// Distinct users (GlobalUserName) one site may report in one month, unless configured: a large
/// HPC site has a few thousand active users.
pub const DEFAULT_MAX_USERS_PER_MONTH: usize = 10_000;
/// Distinct GPU models one site may report in one month, unless configured.
pub const DEFAULT_MAX_MODELS_PER_MONTH: usize = 100;

/// `[ingest] max_vos_per_month`, `max_users_per_month` and `max_models_per_month`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistinctCaps {
    pub vos: usize,
    pub users: usize,
    pub models: usize,
}

impl Default for DistinctCaps {
    fn default() -> Self {
        Self {
            vos: DEFAULT_MAX_VOS_PER_MONTH,
            users: DEFAULT_MAX_USERS_PER_MONTH,
            models: DEFAULT_MAX_MODELS_PER_MONTH,
        }
    }
}

/// What a site already reported in one month.
#[derive(Debug, Default)]
struct Known {
    vos: HashSet<String>,
    users: HashSet<String>,
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
                users: repository
                    .users(site.as_str(), period)
                    .await?
                    .into_iter()
                    .collect(),
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
            let user = record.global_user_name.as_ref()?;
            admit(
                &mut known.users,
                user.as_str(),
                caps.users,
                "user",
                "max_users_per_month",
                record,
            )
        })
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
