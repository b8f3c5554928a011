//! An SVG chart: GPU-hours per group (VO by default) per month, as stacked bars.
//!
//! Written by hand rather than with a plotting crate: the chart is a few dozen rectangles and labels,
//! plotting crates need font files to measure text (none are installed on a server), and hand-written
//! SVG is deterministic, so it has a golden test. Each bar segment carries a `<title>`, so a browser
//! shows the exact figure on hover.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::repository::{Dimension, Period, SummaryRow};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 540.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 220.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 60.0;
/// Okabe-Ito and Tableau colours: distinguishable, also by most colour-blind readers.
const PALETTE: [&str; 10] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
    "#8C564B", "#17BECF",
];

/// Renders rows grouped by (`series`, month) as a stacked bar chart, one bar per month from the
/// first to the last month present (or `from`..=`to` when given), one colour per series value.
pub fn render(
    series: Dimension,
    rows: &[SummaryRow],
    from: Option<Period>,
    to: Option<Period>,
) -> String {
    let mut cells: BTreeMap<(Period, String), f64> = BTreeMap::new();
    let mut names = BTreeSet::new();
    for row in rows {
        let Some(month) = row.key.month else { continue };
        let name = if series == Dimension::Month {
            "all".to_owned()
        } else {
            row.key.get(series).unwrap_or_default()
        };
        *cells.entry((month, name.clone())).or_default() += row.totals.gpu_hours();
        names.insert(name);
    }
    let names: Vec<String> = names.into_iter().collect();
    let months = month_axis(&cells, from, to);
    let mut month_totals: BTreeMap<Period, f64> = BTreeMap::new();
    for ((month, _), hours) in &cells {
        *month_totals.entry(*month).or_default() += hours;
    }
    // Over the months shown: a month left off the axis must not scale it.
    let max = months
        .iter()
        .filter_map(|month| month_totals.get(month))
        .copied()
        .fold(0.0, f64::max);
    let (step, top) = ticks(max);

    let mut out = String::new();
    let title = format!("GPU-hours per {} per month", series.name().to_uppercase());
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">
<title>{}</title>
<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>
<text x="{LEFT}" y="32" font-size="18" font-weight="bold">{}</text>
"#,
        escape(&title),
        escape(&title)
    );
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |value: f64| TOP + plot_h - value / top * plot_h;
    // Grid lines and the value axis.
    let mut tick = 0.0;
    while tick <= top + step / 2.0 {
        let ty = y(tick);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}" stroke="#dddddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 8.0,
            ty + 4.0,
            label(tick)
        );
        tick += step;
    }
    let _ = writeln!(
        out,
        r#"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">GPU-hours</text>"#,
        TOP + plot_h / 2.0
    );
    // Bars.
    let slot = plot_w / months.len().max(1) as f64;
    let bar = (slot * 0.7).min(60.0);
    for (i, month) in months.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut base = 0.0;
        for (s, name) in names.iter().enumerate() {
            let Some(&hours) = cells.get(&(*month, name.clone())) else {
                continue;
            };
            if hours <= 0.0 {
                continue;
            }
            let (y0, y1) = (y(base), y(base + hours));
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{y1:.1}" width="{bar:.1}" height="{:.1}" fill="{}"><title>{} {month}: {} GPU-hours</title></rect>"#,
                (y0 - y1).max(0.0),
                PALETTE[s % PALETTE.len()],
                escape(name),
                label(hours)
            );
            base += hours;
        }
        if base > 0.0 {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                x + bar / 2.0,
                y(base) - 4.0,
                label(base)
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{month}</text>"#,
            x + bar / 2.0,
            TOP + plot_h + 20.0
        );
    }
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333333"/>"##,
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h
    );
    // Legend, with each series' total over the chart; listed top-down in the order the segments
    // are stacked bottom-up, so the legend reads like the bars.
    let legend_x = WIDTH - RIGHT + 20.0;
    let _ = writeln!(
        out,
        r#"<text x="{legend_x}" y="{TOP}" font-weight="bold">{}</text>"#,
        series.name().to_uppercase()
    );
    for (row, (s, name)) in names.iter().enumerate().rev().enumerate() {
        let total: f64 = months
            .iter()
            .filter_map(|m| cells.get(&(*m, name.clone())))
            .sum();
        let ly = TOP + 20.0 + 20.0 * row as f64;
        let _ = writeln!(
            out,
            r#"<rect x="{legend_x}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{ly:.1}"><title>{}</title>{} ({})</text>"#,
            ly - 10.0,
            PALETTE[s % PALETTE.len()],
            legend_x + 18.0,
            escape(name),
            escape(&shorten(name)),
            label(total)
        );
    }
    if names.is_empty() {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">no usage recorded</text>"#,
            LEFT + plot_w / 2.0,
            TOP + plot_h / 2.0
        );
    }
    out.push_str("</svg>\n");
    out
}

/// Every month from the first to the last (bounded by `from`/`to`), gaps included, so the time axis
/// is not distorted by months without usage. At most the last 240 months: a span longer than that
/// (one record from the federation's epoch, 2000, which any site may send) keeps the recent months on the chart instead of
/// stopping the axis before them.
fn month_axis(
    cells: &BTreeMap<(Period, String), f64>,
    from: Option<Period>,
    to: Option<Period>,
) -> Vec<Period> {
    let first = from.or_else(|| cells.keys().next().map(|(m, _)| *m));
    let last = to.or_else(|| cells.keys().next_back().map(|(m, _)| *m));
    let (Some(first), Some(last)) = (first, last) else {
        return Vec::new();
    };
    let mut months = std::collections::VecDeque::new();
    let mut month = first;
    // A report over centuries would be unreadable anyway; cap the bars, keeping the newest.
    while month <= last {
        months.push_back(month);
        if months.len() > MAX_MONTHS {
            months.pop_front();
        }
        month = month.next();
    }
    months.into()
}

/// The most months one chart shows.
const MAX_MONTHS: usize = 240;

/// A tick step of 1, 2 or 5 times a power of ten giving about five grid lines, and the axis top.
fn ticks(max: f64) -> (f64, f64) {
    if max <= 0.0 {
        return (1.0, 5.0);
    }
    let rough = max / 5.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * power);
    (step, (max / step).ceil() * step)
}

/// A number for a label: whole above 100 with thousands separated (`25,599`), otherwise up to one
/// decimal.
fn label(value: f64) -> String {
    if value < 100.0 && value.fract() != 0.0 {
        return format!("{value:.1}");
    }
    let digits = format!("{value:.0}");
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 && c.is_ascii_digit() {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Legend names longer than the legend column are cut; the full name is the entry's tooltip.
fn shorten(name: &str) -> String {
    const MAX: usize = 24;
    if name.chars().count() <= MAX {
        name.to_owned()
    } else {
        let mut short: String = name.chars().take(MAX - 1).collect();
        short.push('…');
        short
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;
    use accelfed_schemas::usage::Month;

    #[test]
    fn draws_every_month_and_names_every_vo() {
        let svg = render(Dimension::Vo, &sample::rows(), None, None);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>\n"));
        for name in ["atlas", "biomed, &quot;eu&quot;", "cms"] {
            assert!(svg.contains(name), "{name} missing");
        }
        for month in ["2026-01", "2026-02", "2026-03"] {
            assert!(svg.contains(&format!(">{month}</text>")), "{month} missing");
        }
        assert!(svg.contains("<title>atlas 2026-01: 2,000 GPU-hours</title>"));
        // The legend lists the top segment first.
        assert!(
            svg.find(">cms (900)</text>").unwrap() < svg.find(">atlas (4,500)</text>").unwrap()
        );
    }

    #[test]
    fn one_record_from_the_epoch_leaves_the_recent_months_on_the_chart() {
        let mut cells = BTreeMap::new();
        let old = Period::new(Month::MIN_YEAR, 1).unwrap();
        let recent = Period::new(2026, 10).unwrap();
        cells.insert((old, "atlas".to_owned()), 1.0);
        cells.insert((recent, "atlas".to_owned()), 100.0);
        let months = month_axis(&cells, None, None);
        assert_eq!(months.len(), MAX_MONTHS);
        assert_eq!(months.last(), Some(&recent));
        assert!(!months.contains(&old));
    }

    #[test]
    fn labels_read_easily() {
        assert_eq!(label(25_599.4), "25,599");
        assert_eq!(label(1_234_567.0), "1,234,567");
        assert_eq!(label(999.0), "999");
        assert_eq!(label(2.25), "2.2");
        assert_eq!(
            shorten("a-very-long-virtual-organisation.example.org"),
            "a-very-long-virtual-org…"
        );
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(2600.0), (1000.0, 3000.0));
        assert_eq!(ticks(4.2), (1.0, 5.0));
        assert_eq!(ticks(0.0), (1.0, 5.0));
    }
}
