//! "Who used them" and "what sat idle", drawn: each chart with a table under it (its legend: the
//! colour, the figures, the share) and a CSV download of the same numbers from the report API,
//! which answers what `accelfed report --by <dimension>,month --format csv` prints.

use maud::{Markup, html};

use accelfed_accounting::repository::Dimension;

use super::chart::{self, short};
use super::usage::{Usage, UsageState, idle_hours};

/// Where the page's CSV downloads come from.
const REPORT_PATH: &str = "/accounting/v1/report";

fn noun(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::Vo => "VO",
        Dimension::Site => "site",
        Dimension::Model => "GPU model",
        Dimension::User => "user",
        Dimension::Month => "month",
    }
}

fn swatch(colour: &str) -> Markup {
    html! {
        svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" {
            rect width="12" height="12" rx="2" fill=(colour) {}
        }
    }
}

fn percent(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.1} %", part / whole * 100.0)
    } else {
        "–".to_owned()
    }
}

fn hours(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), |h| format!("{h:.1}"))
}

fn chart_section(usage: &Usage) -> Markup {
    let name = usage.dimension.name();
    let total = usage.total.gpu_hours();
    html! {
        h3 { "GPU-hours per " (noun(usage.dimension)) }
        figure.chart { (chart::render(&format!("chart-{name}"), usage)) }
        @if let Some(partial) = usage.partial {
            p.muted.partial-note { (partial.to_string()) " is still running: its bar is pale and will grow." }
        }
        table.usage id={"usage-" (name)} {
            thead { tr {
                th { "" } th { (noun(usage.dimension)) } th.n { "GPU-hours" } th.n { "share" }
                th.n { "idle GPU-hours" } th.n { "records" }
            } }
            tbody {
                @for series in &usage.series {
                    tr.series {
                        td { (swatch(series.colour)) }
                        td.name { (series.name) }
                        td.n.hours { (format!("{:.1}", series.totals.gpu_hours())) }
                        td.n { (percent(series.totals.gpu_hours(), total)) }
                        td.n { (hours(idle_hours(&series.totals))) }
                        td.n { (series.totals.records) }
                    }
                }
                tr.total {
                    td { "" } td { "all" } td.n { (format!("{total:.1}")) } td.n { "100 %" }
                    td.n { (hours(idle_hours(&usage.total))) } td.n { (usage.total.records) }
                }
            }
        }
        a.csv id={"csv-" (name)} href={(REPORT_PATH) "?" (usage.csv_query)}
            download={"gpu-hours-by-" (name) "-month.csv"} {
            "Download CSV (per " (noun(usage.dimension)) " and month)"
        }
    }
}

/// Idle GPU-hours per series of `usage`, largest first, as a table with a bar of the idle share.
fn idle_table(usage: &Usage) -> Markup {
    let mut rows: Vec<(&str, f64, f64)> = usage
        .series
        .iter()
        .filter_map(|s| {
            let idle = idle_hours(&s.totals)?;
            Some((s.name.as_str(), idle, s.totals.measured_gpu_hours()?))
        })
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    let name = usage.dimension.name();
    html! {
        h3 { "Idle GPU-hours per " (noun(usage.dimension)) }
        table.idle id={"idle-" (name)} {
            thead { tr {
                th { (noun(usage.dimension)) } th.n { "idle GPU-hours" }
                th.n { "of GPU-hours reporting activity" } th.n { "idle share" } th { "" }
            } }
            tbody {
                @for (series, idle, available) in &rows {
                    @let share = if *available > 0.0 { (idle / available).clamp(0.0, 1.0) } else { 0.0 };
                    tr {
                        td.name { (series) }
                        td.n.idle-hours { (format!("{idle:.1}")) }
                        td.n { (short(*available)) }
                        td.n { (percent(*idle, *available)) }
                        td {
                            svg width="120" height="8" viewBox="0 0 120 8" aria-hidden="true" {
                                rect width="120" height="8" rx="3" fill="#d0d7de" {}
                                rect width=(format!("{:.1}", 120.0 * share)) height="8" rx="3" fill="#bf8700" {}
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Both sections.
pub fn render(state: &UsageState) -> Markup {
    html! {
        section id="usage" {
            h2 { "Who used them" }
            @match state {
                UsageState::NoRepository => p.muted { "No accounting repository is configured." },
                UsageState::NotPublic => p.muted {
                    "Usage figures are not public here ([access] anonymous = false): read them \
                     from the report API with a token."
                },
                UsageState::Unavailable(reason) => p.problem {
                    "The accounting repository could not be read: " (reason)
                },
                UsageState::Charts(charts) if charts.is_empty() => p.muted { "No usage recorded yet." },
                UsageState::Charts(charts) => { @for usage in charts { (chart_section(usage)) } },
            }
        }
        @if let UsageState::Charts(charts) = state {
            section id="idle" {
                h2 { "What sat idle" }
                @let with_idle: Vec<&Usage> = charts.iter()
                    .filter(|u| matches!(u.dimension, Dimension::Vo | Dimension::Site))
                    .filter(|u| idle_hours(&u.total).is_some())
                    .collect();
                @if with_idle.is_empty() {
                    p.muted { "No record reports its active time (ActiveDuration), so idle time is unknown." }
                } @else {
                    p.muted {
                        "GPU-hours allocated but not active, over the records that report their \
                         active time."
                    }
                    @for usage in with_idle { (idle_table(usage)) }
                }
            }
        }
    }
}
