//! Capacity bounds usage, checked centrally (`accelfed report --check`): per site, physical model
//! and month, the GPU-hours in the summaries against the GPUs installed x the month's hours.
//!
//! The installed figure is what the site's meter read from its own inventory and sent with every
//! record (`installed`); the repository keeps the largest figure a (site, model, month)'s records
//! carry. Reading it scans the records of the months asked for (an audit, not a report on every
//! page load); the GPU-hours come from the summaries as every report's do. A (site, model, month)
//! whose records carry no figure (older meters, models the inventory counts in slots) is not
//! checked, and the check says how many such groups it skipped.

use std::collections::BTreeMap;

use accelfed_schemas::usage::Month;

use super::period::Period;
use super::query::SummaryRow;

/// The largest installed figure per (site, model, month) among the records that carry one.
pub(crate) const INSTALLED_SQL: &str = "SELECT site, model, period, MAX(installed) FROM records \
     WHERE installed IS NOT NULL GROUP BY site, model, period ORDER BY site, model, period";

/// Installed physical GPUs of one (site, model, month), as the site's records carry them.
#[derive(Debug, Clone, PartialEq)]
pub struct Installed {
    pub site: String,
    pub model: String,
    pub period: Period,
    pub gpus: f64,
}

/// One (site, model, month) whose GPU-hours exceed its installed GPUs x the month's hours.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityBreach {
    pub site: String,
    pub model: String,
    pub period: Period,
    pub gpu_hours: f64,
    pub installed: f64,
    pub bound_gpu_hours: f64,
}

impl std::fmt::Display for CapacityBreach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {:?}: {:.3} GPU-hours metered, at most {:.3} ({} GPUs installed)",
            self.site,
            self.period,
            self.model,
            self.gpu_hours,
            self.bound_gpu_hours,
            self.installed
        )
    }
}

/// What the check found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapacityCheck {
    /// Every breach, in (site, month, model) order.
    pub breaches: Vec<CapacityBreach>,
    /// (site, model, month)s checked against an installed figure.
    pub checked: usize,
    /// (site, model, month)s with usage but no installed figure.
    pub unchecked: usize,
}

/// Compares `rows` (summaries grouped by site, model and month) with `installed`.
pub fn check(rows: &[SummaryRow], installed: &[Installed]) -> CapacityCheck {
    let bounds: BTreeMap<(&str, &str, Period), f64> = installed
        .iter()
        .map(|i| ((i.site.as_str(), i.model.as_str(), i.period), i.gpus))
        .collect();
    let mut result = CapacityCheck::default();
    for row in rows {
        let (Some(site), Some(model), Some(period)) =
            (&row.key.site, &row.key.model, row.key.month)
        else {
            continue;
        };
        let Some(&gpus) = bounds.get(&(site.as_str(), model.as_str(), period)) else {
            result.unchecked += 1;
            continue;
        };
        result.checked += 1;
        let hours = Month::new(period.year(), period.month())
            .map(|m| m.seconds() as f64 / 3600.0)
            .unwrap_or(0.0);
        let bound_milli_seconds = (gpus * 1000.0 * hours * 3600.0).round() as i64;
        // Integer milli-GPU-seconds on both sides; one per record of slack for the rounding of
        // each record's contribution.
        if row.totals.gpu_milli_seconds > bound_milli_seconds + row.totals.records {
            result.breaches.push(CapacityBreach {
                site: site.clone(),
                model: model.clone(),
                period,
                gpu_hours: row.totals.gpu_hours(),
                installed: gpus,
                bound_gpu_hours: gpus * hours,
            });
        }
    }
    result.breaches.sort_by(|a, b| {
        (a.site.as_str(), a.period, a.model.as_str()).cmp(&(
            b.site.as_str(),
            b.period,
            b.model.as_str(),
        ))
    });
    result
}
