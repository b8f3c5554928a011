//! A stacked bar chart of GPU-hours per month, as inline SVG built with [`maud`] (escaped).
//!
//! Readable at 50 series and 36 months: the series are already cut to a dozen and the rest
//! ([`super::usage`]); month labels are thinned to every 1, 2, 3, 4, 6 or 12 months, whichever is
//! the first that leaves each label its width, and fall on the same calendar months every year;
//! the running month's bar is drawn pale with a dashed outline and labelled "partial". The legend
//! is the table under the chart, so it is never cut off. Each segment has a `<title>` with its
//! figure, which a browser shows on hover.

use maud::{Markup, html};

use accelfed_accounting::repository::Period;

use super::usage::{Series, Usage};

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;
/// Room one month label needs: `2026-01` at 12 px is about 46 px wide, plus a gap.
pub const LABEL_ROOM: f64 = 58.0;

/// Every how many months a label is written so that labels `slot` px apart do not touch.
pub fn label_every(slot: f64) -> u32 {
    [1, 2, 3, 4, 6, 12]
        .into_iter()
        .find(|&every| slot * f64::from(every) >= LABEL_ROOM)
        .unwrap_or_else(|| 12 * (LABEL_ROOM / (slot * 12.0)).ceil().max(1.0) as u32)
}

/// Whether `month` gets a label when labels come every `every` months: the same calendar months
/// each year (January, April, July and October for every 3), or every `every`-th bar past a year.
fn labelled(month: Period, position: usize, every: u32) -> bool {
    if every <= 12 {
        (month.month() - 1).is_multiple_of(every)
    } else {
        position.is_multiple_of(every as usize)
    }
}

/// A round step for about five gridlines up to `max`, and the axis top.
pub fn ticks(max: f64) -> (f64, f64) {
    if max <= 0.0 {
        return (1.0, 1.0);
    }
    let rough = max / 5.0;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * magnitude);
    (step, (max / step).ceil() * step)
}

/// `hours` short: 950, 12.5k, 3.2M.
pub fn short(hours: f64) -> String {
    if hours >= 1e6 {
        format!("{:.1}M", hours / 1e6)
    } else if hours >= 1e4 {
        format!("{:.0}k", hours / 1e3)
    } else if hours >= 1e3 {
        format!("{:.1}k", hours / 1e3)
    } else if hours >= 10.0 || hours == 0.0 {
        format!("{hours:.0}")
    } else {
        format!("{hours:.1}")
    }
}

fn f(value: f64) -> String {
    format!("{value:.1}")
}

/// The segments of `month`'s bar, bottom up: each series with GPU-hours then, where it starts and
/// how many.
fn stack(usage: &Usage, month: Period) -> Vec<(&Series, f64, f64)> {
    let mut base = 0.0;
    let mut out = Vec::new();
    for series in &usage.series {
        if let Some(&hours) = series.hours.get(&month).filter(|hours| **hours > 0.0) {
            out.push((series, base, hours));
            base += hours;
        }
    }
    out
}

/// The chart of `usage`, its SVG id `id`.
pub fn render(id: &str, usage: &Usage) -> Markup {
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let count = usage.months.len().max(1);
    let slot = plot_width / count as f64;
    let bar = (slot * 0.78).max(1.0);
    let month_totals: Vec<f64> = usage
        .months
        .iter()
        .map(|month| usage.series.iter().filter_map(|s| s.hours.get(month)).sum())
        .collect();
    let (step, top) = ticks(month_totals.iter().copied().fold(0.0, f64::max));
    let y = |hours: f64| TOP + plot_height - hours / top * plot_height;
    let every = label_every(slot);
    let gridlines: Vec<f64> = (0..=((top / step).round() as usize))
        .map(|i| i as f64 * step)
        .collect();
    html! {
        svg id=(id) class="usage-chart" xmlns="http://www.w3.org/2000/svg"
            viewBox={"0 0 " (WIDTH) " " (HEIGHT)} width=(WIDTH) height=(HEIGHT)
            font-family="system-ui,sans-serif" font-size="12" role="img"
            aria-label={"GPU-hours per " (usage.dimension.name()) " per month"} {
            text x=(LEFT) y="16" fill="#57606a" { "GPU-hours per month" }
            @for value in &gridlines {
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(f(y(*value))) y2=(f(y(*value)))
                    stroke=(if *value == 0.0 { "#8c959f" } else { "#eaeef2" }) {}
                text x=(LEFT - 8.0) y=(f(y(*value) + 4.0)) text-anchor="end" fill="#57606a" {
                    (short(*value))
                }
            }
            @for (position, month) in usage.months.iter().enumerate() {
                @let x = LEFT + position as f64 * slot + (slot - bar) / 2.0;
                @let partial = usage.partial == Some(*month);
                g class="bar" data-month=(month.to_string()) opacity=(if partial { "0.45" } else { "1" }) {
                    @for (series, bottom, hours) in stack(usage, *month) {
                        rect x=(f(x)) width=(f(bar)) y=(f(y(bottom + hours)))
                            height=(f(y(bottom) - y(bottom + hours))) fill=(series.colour) {
                            title { (series.name) ", " (month.to_string()) ": "
                                (format!("{hours:.1}")) " GPU-hours"
                                @if partial { " (month still running)" } }
                        }
                    }
                }
                @if partial {
                    rect class="partial" x=(f(x)) width=(f(bar)) y=(f(y(month_totals[position])))
                        height=(f(y(0.0) - y(month_totals[position]))) fill="none" stroke="#57606a"
                        stroke-dasharray="3 2" {}
                    text x=(f(x + bar / 2.0)) y=(f(y(month_totals[position]) - 5.0))
                        text-anchor="middle" fill="#57606a" font-size="11" { "partial" }
                }
                @if labelled(*month, position, every) {
                    text class="month-label" x=(f(x + bar / 2.0)) y=(f(HEIGHT - BOTTOM + 18.0))
                        text-anchor="middle" fill="#24292f" { (month.to_string()) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_thin_to_calendar_steps_that_leave_each_its_room() {
        // 36 months on 924 px: 25.7 px a bar, every 3rd month labelled (77 px apart).
        assert_eq!(label_every(924.0 / 36.0), 3);
        assert_eq!(label_every(924.0 / 6.0), 1);
        assert_eq!(label_every(924.0 / 120.0), 12);
        let every = label_every(924.0 / 400.0);
        assert!(
            every > 12
                && every.is_multiple_of(12)
                && 924.0 / 400.0 * f64::from(every) >= LABEL_ROOM
        );
        let april = Period::new(2026, 4).unwrap();
        assert!(labelled(april, 5, 3));
        assert!(!labelled(Period::new(2026, 5).unwrap(), 6, 3));
    }

    #[test]
    fn ticks_are_round_and_cover_the_largest_bar() {
        assert_eq!(ticks(0.0), (1.0, 1.0));
        assert_eq!(ticks(1234.0), (250.0, 1250.0));
        assert_eq!(ticks(9.0), (2.0, 10.0));
        assert_eq!(short(12_345.0), "12k");
        assert_eq!(short(2_500.0), "2.5k");
        assert_eq!(short(3_200_000.0), "3.2M");
    }
}
