//! Reports: GPU-hours per VO, site, GPU model or month, read from the summary table only.
//!
//! A [`Report`] is built from summary rows grouped by one dimension; the renderers turn it into a
//! terminal table, CSV, JSON or an SVG chart. Rendering is pure and deterministic (rows sorted by
//! key), so golden tests are stable.

mod csv;
mod json;
mod svg;
mod table;

use std::fmt;
use std::str::FromStr;

use crate::repository::{Dimension, Period, SummaryRow, Totals};

pub use svg::render as render_svg;

/// One line of a report: a group's key as text, and its totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportLine {
    pub key: String,
    pub totals: Totals,
}

/// A report grouped by one dimension, with the filter that produced it (for the headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub by: Dimension,
    pub from: Option<Period>,
    pub to: Option<Period>,
    pub lines: Vec<ReportLine>,
    pub total: Totals,
}

impl Report {
    /// A report from rows grouped by `by` alone (rows grouped otherwise are summed per `by` key).
    pub fn from_rows(
        by: Dimension,
        from: Option<Period>,
        to: Option<Period>,
        rows: &[SummaryRow],
    ) -> Self {
        let mut grouped: std::collections::BTreeMap<String, Totals> = Default::default();
        let mut total = Totals::default();
        for row in rows {
            let key = row.key.get(by).unwrap_or_default();
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
            lines,
            total,
        }
    }

    /// Renders as text in `format`. SVG needs rows per month and is rendered by [`render_svg`].
    pub fn render(&self, format: TextFormat) -> String {
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
            Dimension::Vo,
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
        let keys: Vec<&str> = report.lines.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(keys, ["atlas", "biomed, \"eu\"", "cms"]);
        assert_eq!(report.lines[0].totals.records, 22);
        assert_eq!(report.lines[0].totals.gpu_hours(), 4_500.0);
        assert_eq!(report.total.records, 30);
        let by_month = Report::from_rows(Dimension::Month, None, None, &sample::rows());
        let keys: Vec<&str> = by_month.lines.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(keys, ["2026-01", "2026-02", "2026-03"]);
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
