//! "Capacity and occupancy over time", drawn from the registry's history ([`crate::registry::capacity`]):
//! per GPU model, the physical GPUs in use and free at fresh sites as a stepped area (a level
//! holds until the next push or expiry changes it), with a table and a CSV download under each.
//! Sites whose document had gone stale are left out of the areas and counted apart (the table's
//! last column, and a dashed line when there are any), as on the "free now" cards.
//!
//! Readable with many instants: at most [`crate::registry::capacity::MAX_POINTS`] columns, and time
//! labels spaced by the room one needs, whatever the number of instants.

use chrono::{DateTime, Utc};
use maud::{Markup, display, html};

use crate::registry::capacity::{Level, OverTime};

use super::chart::{short, ticks};
use super::usage::query_escape;

/// Charts drawn: the models with the most GPUs now; the rest are in the CSV.
pub const MAX_MODELS: usize = 6;
const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 36.0;
/// Room one time label needs: `2026-11-27 23:10` at 12 px is about 100 px wide, plus a gap.
pub const TIME_LABEL_ROOM: f64 = 120.0;
const USED: &str = "#0072B2";
const FREE: &str = "#2da44e";

/// Where the CSV of the same figures is served (relative to the page).
pub const CSV_PATH: &str = "capacity.csv";

fn f(value: f64) -> String {
    format!("{value:.1}")
}

/// How instants are written for a span of `seconds`: with seconds within an hour (labels a few
/// seconds apart would otherwise read the same), times of day within two days, dates past sixty.
fn time_format(seconds: i64) -> &'static str {
    if seconds <= 3_600 {
        "%H:%M:%S"
    } else if seconds <= 2 * 86_400 {
        "%H:%M"
    } else if seconds <= 60 * 86_400 {
        "%m-%d %H:%M"
    } else {
        "%Y-%m-%d"
    }
}

/// The models drawn: the most GPUs (fresh and stale) at the last instant first.
pub fn shown(over: &OverTime) -> Vec<(&String, &Vec<Level>)> {
    let size = |levels: &Vec<Level>| {
        levels
            .last()
            .map_or(0.0, |l| l.total.get() + l.stale_total.get())
    };
    let mut models: Vec<(&String, &Vec<Level>)> = over.models.iter().collect();
    models.sort_by(|a, b| size(b.1).total_cmp(&size(a.1)).then(a.0.cmp(b.0)));
    models
}

/// A stepped path through `points` (x, y), closed down to `base` when it is an area.
fn steps(points: &[(f64, f64)], base: Option<f64>) -> String {
    let mut path = String::new();
    for (i, (x, y)) in points.iter().enumerate() {
        if i == 0 {
            match base {
                Some(base) => path.push_str(&format!("M{} {}L{} {}", f(*x), f(base), f(*x), f(*y))),
                None => path.push_str(&format!("M{} {}", f(*x), f(*y))),
            }
        } else {
            let previous = points[i - 1].1;
            path.push_str(&format!("L{} {}L{} {}", f(*x), f(previous), f(*x), f(*y)));
        }
    }
    if let (Some(base), Some((x, _))) = (base, points.last()) {
        path.push_str(&format!("L{} {}Z", f(*x), f(base)));
    }
    path
}

/// The chart of one model's `levels` at `instants`, its SVG id `id`.
pub fn chart(id: &str, model: &str, instants: &[DateTime<Utc>], levels: &[Level]) -> Markup {
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let (Some(first), Some(last)) = (instants.first(), instants.last()) else {
        return html! {};
    };
    let span = (*last - *first).num_milliseconds().max(1) as f64;
    let x =
        |at: &DateTime<Utc>| LEFT + (*at - *first).num_milliseconds() as f64 / span * plot_width;
    let stale_any = levels.iter().any(|l| l.stale_total.get() > 0.0);
    let max = levels
        .iter()
        .map(|l| l.total.get() + l.stale_total.get())
        .fold(0.0, f64::max);
    let (step, top) = ticks(max);
    let y = |gpus: f64| TOP + plot_height - gpus / top * plot_height;
    let line = |value: fn(&Level) -> f64| -> Vec<(f64, f64)> {
        instants
            .iter()
            .zip(levels)
            .map(|(at, l)| (x(at), y(value(l))))
            .collect()
    };
    let base = y(0.0);
    let gridlines: Vec<f64> = (0..=((top / step).round() as usize))
        .map(|i| i as f64 * step)
        .collect();
    // As many labels as have room, evenly spaced in time, the first and last at the ends.
    let labels =
        ((plot_width / TIME_LABEL_ROOM).floor() as usize).clamp(1, instants.len().max(2) - 1);
    let format = time_format((*last - *first).num_seconds());
    html! {
        svg id=(id) class="capacity-chart" xmlns="http://www.w3.org/2000/svg"
            viewBox={"0 0 " (WIDTH) " " (HEIGHT)} width=(WIDTH) height=(HEIGHT)
            font-family="system-ui,sans-serif" font-size="12" role="img"
            aria-label={"Physical " (model) " GPUs in use and free over time"} {
            @for value in &gridlines {
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(f(y(*value))) y2=(f(y(*value)))
                    stroke=(if *value == 0.0 { "#8c959f" } else { "#eaeef2" }) {}
                text x=(LEFT - 8.0) y=(f(y(*value) + 4.0)) text-anchor="end" fill="#57606a" {
                    (short(*value))
                }
            }
            path class="free" d=(steps(&line(|l| l.total.get()), Some(base))) fill=(FREE)
                fill-opacity="0.35" stroke=(FREE) stroke-width="1.5" {
                title { "free: the light area up to the line of all GPUs" }
            }
            path class="used" d=(steps(&line(|l| l.used().get()), Some(base))) fill=(USED)
                fill-opacity="0.85" {
                title { "in use" }
            }
            @if stale_any {
                path class="stale" d=(steps(&line(|l| l.total.get() + l.stale_total.get()), None))
                    fill="none" stroke="#8c959f" stroke-dasharray="4 3" {
                    title { "with the GPUs of stale sites, which the areas leave out" }
                }
            }
            @for i in 0..=labels {
                @let at = *first + chrono::TimeDelta::milliseconds((span * i as f64 / labels as f64) as i64);
                @let anchor = if i == 0 { "start" } else if i == labels { "end" } else { "middle" };
                line x1=(f(x(&at))) x2=(f(x(&at))) y1=(f(base)) y2=(f(base + 4.0)) stroke="#8c959f" {}
                text class="time-label" x=(f(x(&at))) y=(f(HEIGHT - BOTTOM + 18.0))
                    text-anchor=(anchor) fill="#24292f" { (at.format(format).to_string()) }
            }
        }
    }
}

fn legend(stale_any: bool) -> Markup {
    let swatch = |colour: &str, opacity: &str| {
        html! {
            svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" {
                rect width="12" height="12" rx="2" fill=(colour) fill-opacity=(opacity) {}
            }
        }
    };
    html! {
        p.muted.legend {
            (swatch(USED, "0.85")) " in use  " (swatch(FREE, "0.35")) " free (fresh sites)"
            @if stale_any { "  - - - with stale sites' GPUs, left out of the areas" }
        }
    }
}

/// The section, for `site` or the federation.
pub fn render(over: &OverTime, site: Option<&str>) -> Markup {
    let models = shown(over);
    let hidden = models.len().saturating_sub(MAX_MODELS);
    let site_query = site.map_or_else(String::new, |s| format!("&site={}", query_escape(s)));
    html! {
        section id="capacity" {
            h2 { "Capacity and occupancy over time" }
            @if models.is_empty() {
                p.muted { "No document with physical GPU counts has been pushed yet." }
            } @else {
                p.muted {
                    "Physical GPUs per model as the sites' documents gave them, read from the \
                     registry's history of each site's pushes; a site whose document had expired \
                     is left out of the areas and counted apart."
                }
            }
            @for (position, (model, levels)) in models.iter().take(MAX_MODELS).enumerate() {
                @let stale_any = levels.iter().any(|l| l.stale_total.get() > 0.0);
                h3 { (model) }
                figure.chart { (chart(&format!("capacity-{position}"), model, &over.instants, levels)) }
                (legend(stale_any))
                details {
                    summary { "Table (" (over.instants.len()) " instants)" }
                    table.capacity id={"capacity-table-" (position)} data-model=(model) {
                        thead { tr {
                            th { "time (UTC)" } th.n { "GPUs" } th.n { "in use" } th.n { "free" }
                            th.n { "at stale sites" }
                        } }
                        tbody {
                            @for (at, level) in over.instants.iter().zip(levels.iter()) {
                                tr {
                                    td { (at.format("%Y-%m-%d %H:%M:%S").to_string()) }
                                    td.n.total { (display(level.total)) }
                                    td.n.used { (display(level.used())) }
                                    td.n.free { (display(level.free)) }
                                    td.n.stale { (display(level.stale_total)) }
                                }
                            }
                        }
                    }
                }
                a.csv id={"capacity-csv-" (position)}
                    href={(CSV_PATH) "?model=" (query_escape(model)) (site_query)}
                    download={"capacity-" (model) ".csv"} {
                    "Download CSV (" (model) " over time)"
                }
            }
            @if hidden > 0 {
                p.muted { (hidden) " more models, in the "
                    a href={(CSV_PATH) "?" (site_query.trim_start_matches('&'))} { "CSV of every model" } "." }
            }
        }
    }
}

/// The CSV of `over`: one row per model and instant, `model` alone when given.
pub fn csv(over: &OverTime, model: Option<&str>) -> String {
    let mut out = String::from("model,time,gpus,in_use,free,at_stale_sites\n");
    for (name, levels) in &over.models {
        if model.is_some_and(|m| m != name) {
            continue;
        }
        // A model name is the site's text: quoted, its quotes doubled, as RFC 4180 has it.
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        for (at, level) in over.instants.iter().zip(levels) {
            out.push_str(&format!(
                "{quoted},{},{},{},{},{}\n",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                level.total,
                level.used(),
                level.free,
                level.stale_total
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::gpu::GpuCount;

    fn over(instants: usize) -> OverTime {
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let level = Level {
            free: GpuCount::whole(3),
            total: GpuCount::whole(8),
            stale_total: GpuCount::ZERO,
        };
        OverTime {
            instants: (0..instants)
                .map(|i| start + chrono::TimeDelta::minutes(i as i64 * 7))
                .collect(),
            models: [("L40S \"x\"".to_owned(), vec![level; instants])].into(),
        }
    }

    #[test]
    fn time_labels_keep_their_room_whatever_the_number_of_instants() {
        for instants in [2, 5, 120] {
            let over = over(instants);
            let svg = chart("c", "L40S", &over.instants, &over.models["L40S \"x\""]).into_string();
            let labels = svg.matches("class=\"time-label\"").count();
            assert!(labels >= 2, "{instants}: {labels}");
            assert!(
                (WIDTH - LEFT - RIGHT) / (labels - 1) as f64 >= TIME_LABEL_ROOM,
                "{instants}: {labels} labels"
            );
        }
    }

    #[test]
    fn the_csv_has_a_row_per_instant_and_quotes_the_model() {
        let csv = csv(&over(2), Some("L40S \"x\""));
        assert_eq!(
            csv,
            "model,time,gpus,in_use,free,at_stale_sites\n\
             \"L40S \"\"x\"\"\",2027-01-15T08:00:00Z,8,5,3,0\n\
             \"L40S \"\"x\"\"\",2027-01-15T08:07:00Z,8,5,3,0\n"
        );
        assert_eq!(super::csv(&over(2), Some("H100")).lines().count(), 1);
    }
}
