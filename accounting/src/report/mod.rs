//! Reports: GPU-hours per VO, site, GPU model or month (or two of them), read from the summary
//! table only.
//!
//! A [`Report`] is built from summary rows grouped by one or two dimensions ([`Grouping`]); the renderers turn it into a
//! terminal table, CSV, JSON or an SVG chart. Rendering is pure and deterministic (rows sorted by
//! key), so golden tests are stable.

mod csv;
mod grouping;
mod idle;
mod json;
mod svg;
mod table;

use std::fmt;
use std::str::FromStr;

use crate::repository::{Dimension, Period, SummaryRow, Totals};

pub use grouping::Grouping;
pub use svg::render as render_svg;

/// One line of a report: a group's key as text (one value per grouped dimension, in the
/// grouping's order), and its totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportLine {
    pub key: Vec<String>,
    pub totals: Totals,
}

/// A report grouped by one or two dimensions, with the filter that produced it (for the headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub by: Grouping,
    pub from: Option<Period>,
    pub to: Option<Period>,
    /// The month still running, when the report covers it: its figures will grow.
    pub partial: Option<Period>,
    pub lines: Vec<ReportLine>,
    pub total: Totals,
    /// Which figures the renderers show.
    pub view: View,
}

/// The figures a report shows per group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// GPU-hours, mean GPUs, active and idle GPU-hours (`accelfed report`).
    #[default]
    Usage,
    /// Idle GPU-hours and their share of the allocated GPU-hours of the records that carry an
    /// ActiveDuration, and the GPU-hours of those that carry none (`accelfed report --idle`).
    Idle,
}

impl Report {
    /// A report from rows grouped by `by` (rows grouped by more are summed per `by` key).
    pub fn from_rows(
        by: Grouping,
        from: Option<Period>,
        to: Option<Period>,
        rows: &[SummaryRow],
    ) -> Self {
        let mut grouped: std::collections::BTreeMap<Vec<String>, Totals> = Default::default();
        let mut total = Totals::default();
        for row in rows {
            let key = by
                .dimensions()
                .iter()
                .map(|d| row.key.get(*d).unwrap_or_default())
                .collect();
            *grouped.entry(key).or_default() += row.totals;
            total += row.totals;
        }
        let lines = grouped
            .into_iter()
            .map(|(key, totals)| ReportLine { key, totals })
            .collect();
        Self {
            by,
            from,
            to,
            partial: None,
            lines,
            total,
            view: View::Usage,
        }
    }

    /// The same report showing `view`'s figures.
    pub fn with_view(mut self, view: View) -> Self {
        self.view = view;
        self
    }

    /// Marks `current` (the month now running) as partial when the report's range covers it.
    pub fn with_current_month(mut self, current: Period) -> Self {
        let covered =
            self.from.is_none_or(|from| from <= current) && self.to.is_none_or(|to| to >= current);
        self.partial = covered.then_some(current);
        self
    }

    /// Whether `line` is a month still running (only a grouping by month tells).
    pub fn is_partial(&self, line: &ReportLine) -> bool {
        let Some(partial) = self.partial else {
            return false;
        };
        self.by
            .dimensions()
            .iter()
            .position(|d| *d == Dimension::Month)
            .is_some_and(|i| line.key.get(i).is_some_and(|k| *k == partial.to_string()))
    }

    /// Renders as text in `format`. SVG needs rows per month and is rendered by [`render_svg`].
    pub fn render(&self, format: TextFormat) -> String {
        if self.view == View::Idle {
            return idle::render(self, format);
        }
        match format {
            TextFormat::Table => table::render(self),
            TextFormat::Csv => csv::render(self),
            TextFormat::Json => json::render(self),
        }
    }
}

/// The output formats of `accelfed report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Text(TextFormat),
    /// A stacked bar chart of GPU-hours per group per month.
    Svg,
}

/// The formats that render a [`Report`] directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// Aligned columns for a terminal, with a total line.
    Table,
    /// RFC 4180 CSV with a header line, for spreadsheets.
    Csv,
    /// One JSON object: the grouping, the month range, the rows and the total.
    Json,
}

impl FromStr for ReportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "table" => Self::Text(TextFormat::Table),
            "csv" => Self::Text(TextFormat::Csv),
            "json" => Self::Text(TextFormat::Json),
            "svg" => Self::Svg,
            other => {
                return Err(format!(
                    "unknown report format {other:?}; expected table, csv, json or svg"
                ));
            }
        })
    }
}

impl fmt::Display for ReportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Text(TextFormat::Table) => "table",
            Self::Text(TextFormat::Csv) => "csv",
            Self::Text(TextFormat::Json) => "json",
            Self::Svg => "svg",
        })
    }
}

/// Three decimals: a thousandth of a GPU-hour is 3.6 GPU-seconds, finer than any meter samples.
fn hours(value: f64) -> String {
    format!("{value:.3}")
}

/// Whether the report shows energy: only where some record of it carries its energy, so a report
/// of sites that measure none reads as before (absent, not 0).
fn shows_energy(report: &Report) -> bool {
    report.total.energy_records > 0
}

/// Watt-hours to the milliwatt-hour the summaries keep.
fn watt_hours(value: f64) -> String {
    format!("{value:.3}")
}

/// Idle GPU-hours, or `None` when no record of the group knows any of its time (an unknown active
/// time is not idle time). The one rule, for every source: a record with an ActiveDuration is
/// measured for all its AvailableDuration and idle for AvailableDuration - ActiveDuration; a
/// record without one is measured and idle for its known-idle seconds (IdleDuration) only, the
/// rest of it unmeasured.
fn idle_hours(totals: &Totals) -> Option<f64> {
    totals.idle_gpu_hours()
}

/// The figures of [`View::Idle`] for one group.
#[derive(Debug, Clone, Copy, PartialEq)]
struct IdleFigures {
    /// Idle GPU-hours; `None` when no record of the group carries an ActiveDuration or known
    /// idle time.
    idle: Option<f64>,
    /// Allocated GPU-hours whose activity is known (the share's base): all of those of the
    /// records that carry an ActiveDuration, and the known-idle part of those that carry none.
    measured: Option<f64>,
    /// Idle GPU-hours as a share of `measured`, in percent.
    percent: Option<f64>,
    /// Allocated GPU-hours of no known activity (records without an ActiveDuration, less their
    /// known-idle time): neither idle nor active as far as anyone knows, so left out of the share
    /// rather than guessed.
    unmeasured: f64,
}

impl IdleFigures {
    fn of(t: &Totals) -> Self {
        let measured = t.active_available_gpu_milli_seconds + t.known_idle_gpu_milli_seconds;
        let idle = measured - t.active_gpu_milli_seconds;
        Self {
            idle: idle_hours(t),
            measured: t.measured_gpu_hours(),
            percent: (t.knows_idle() && measured > 0)
                .then(|| 100.0 * idle as f64 / measured as f64),
            unmeasured: (t.gpu_milli_seconds - measured) as f64 / 3_600_000.0,
        }
    }
}

/// Active time as a share of the available time of the same records, in percent.
fn active_percent(totals: &Totals) -> Option<f64> {
    (totals.active_records > 0 && totals.active_available_gpu_milli_seconds > 0).then(|| {
        100.0 * totals.active_gpu_milli_seconds as f64
            / totals.active_available_gpu_milli_seconds as f64
    })
}

#[cfg(test)]
pub(crate) mod sample {
    use super::*;
    use crate::repository::GroupKey;

    /// Rows grouped by VO and month, as the repository returns them.
    pub fn rows() -> Vec<SummaryRow> {
        let row = |vo: &str, month: &str, records, gpu_milli, hours: i64, active: Option<i64>| {
            let mut totals = Totals {
                records,
                gpu_milli,
                gpu_milli_seconds: hours * 3_600_000,
                ..Totals::default()
            };
            if let Some(active) = active {
                totals.active_records = records;
                totals.active_gpu_milli_seconds = active * 3_600_000;
                totals.active_available_gpu_milli_seconds = hours * 3_600_000;
            }
            SummaryRow {
                key: GroupKey {
                    vo: Some(vo.into()),
                    month: Some(month.parse().unwrap()),
                    ..GroupKey::default()
                },
                totals,
            }
        };
        vec![
            row("atlas", "2026-01", 10, 40_000, 2_000, Some(1_500)),
            row("atlas", "2026-02", 12, 48_000, 2_500, Some(2_000)),
            row("biomed, \"eu\"", "2026-01", 3, 1_500, 100, None),
            row("cms", "2026-03", 5, 20_000, 900, Some(300)),
        ]
    }

    pub fn report() -> Report {
        Report::from_rows(
            Grouping::one(Dimension::Vo),
            Some("2026-01".parse().unwrap()),
            Some("2026-03".parse().unwrap()),
            &rows(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_rows_by_the_chosen_dimension() {
        let report = sample::report();
        let keys: Vec<&str> = report.lines.iter().map(|l| l.key[0].as_str()).collect();
        assert_eq!(keys, ["atlas", "biomed, \"eu\"", "cms"]);
        assert_eq!(report.lines[0].totals.records, 22);
        assert_eq!(report.lines[0].totals.gpu_hours(), 4_500.0);
        assert_eq!(report.total.records, 30);
        let by_month =
            Report::from_rows(Grouping::one(Dimension::Month), None, None, &sample::rows());
        let keys: Vec<&str> = by_month.lines.iter().map(|l| l.key[0].as_str()).collect();
        assert_eq!(keys, ["2026-01", "2026-02", "2026-03"]);
    }

    #[test]
    fn groups_by_two_dimensions_and_marks_the_running_month() {
        let by: Grouping = "vo,month".parse().unwrap();
        let report = Report::from_rows(by, None, None, &sample::rows())
            .with_current_month("2026-03".parse().unwrap());
        let keys: Vec<String> = report.lines.iter().map(|l| l.key.join("/")).collect();
        assert_eq!(
            keys,
            [
                "atlas/2026-01",
                "atlas/2026-02",
                "biomed, \"eu\"/2026-01",
                "cms/2026-03"
            ]
        );
        let partial: Vec<bool> = report.lines.iter().map(|l| report.is_partial(l)).collect();
        assert_eq!(partial, [false, false, false, true]);
        assert_eq!(report.total.records, 30);
        // A range that ends before the running month has no partial month.
        let closed = sample::report().with_current_month("2026-04".parse().unwrap());
        assert_eq!(closed.partial, None);
        assert_eq!(idle_hours(&report.lines[0].totals), Some(500.0));
        assert_eq!(idle_hours(&report.lines[2].totals), None);
    }

    #[test]
    fn parses_formats() {
        assert_eq!("svg".parse::<ReportFormat>(), Ok(ReportFormat::Svg));
        assert_eq!(
            "csv".parse::<ReportFormat>(),
            Ok(ReportFormat::Text(TextFormat::Csv))
        );
        assert!("xml".parse::<ReportFormat>().is_err());
    }
}
