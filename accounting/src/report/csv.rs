//! CSV (RFC 4180): a header line, one line per group, no total line (a spreadsheet sums itself).
//! A report grouped by month ends each line with `partial`: `true` for the month still running.

use super::{Report, active_percent, hours, idle_hours, shows_energy, watt_hours};
use crate::repository::{Dimension, Totals};

/// Column names: the grouping dimensions, then the figures.
const FIGURES: [&str; 7] = [
    "records",
    "gpu_hours",
    "mean_gpus",
    "active_gpu_hours",
    "active_available_gpu_hours",
    "active_percent",
    "idle_gpu_hours",
];

pub(super) fn render(report: &Report) -> String {
    if shows_energy(report) {
        let mut names = FIGURES.to_vec();
        names.push("energy_wh");
        lines(report, &names, figures_with_energy)
    } else {
        lines(report, &FIGURES, figures)
    }
}

/// The CSV of `report` with the figure columns `names`, each line's fields from `figures` (empty
/// for a figure nobody reported).
pub(super) fn lines(
    report: &Report,
    names: &[&str],
    figures: fn(&Totals) -> Vec<String>,
) -> String {
    let by_month = report.by.contains(Dimension::Month);
    let mut header: Vec<&str> = report.by.dimensions().iter().map(|d| d.name()).collect();
    header.extend(names);
    if by_month {
        header.push("partial");
    }
    let mut out = header.join(",");
    out.push_str("\r\n");
    for line in &report.lines {
        let mut fields: Vec<String> = line.key.iter().map(|k| field(k)).collect();
        fields.extend(figures(&line.totals));
        if by_month {
            fields.push(report.is_partial(line).to_string());
        }
        out.push_str(&fields.join(","));
        out.push_str("\r\n");
    }
    out
}

fn figures(t: &Totals) -> Vec<String> {
    vec![
        t.records.to_string(),
        hours(t.gpu_hours()),
        t.mean_gpus().map(|m| format!("{m:.3}")).unwrap_or_default(),
        t.active_gpu_hours().map(hours).unwrap_or_default(),
        t.active_available_gpu_hours()
            .map(hours)
            .unwrap_or_default(),
        active_percent(t)
            .map(|p| format!("{p:.1}"))
            .unwrap_or_default(),
        idle_hours(t).map(hours).unwrap_or_default(),
    ]
}

/// [`figures`] and the energy, for a report in which some record carries its energy.
fn figures_with_energy(t: &Totals) -> Vec<String> {
    let mut fields = figures(t);
    fields.push(t.energy_wh().map(watt_hours).unwrap_or_default());
    fields
}

/// Quotes a field when it holds a comma, a quote or a line break, doubling inner quotes.
fn field(value: &str) -> String {
    if value.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{TextFormat, sample};

    #[test]
    fn renders_rfc4180() {
        let csv = sample::report().render(TextFormat::Csv);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "vo,records,gpu_hours,mean_gpus,active_gpu_hours,active_available_gpu_hours,active_percent,idle_gpu_hours"
        );
        assert_eq!(
            lines[1],
            "atlas,22,4500.000,4.000,3500.000,4500.000,77.8,1000.000"
        );
        assert_eq!(lines[2], "\"biomed, \"\"eu\"\"\",3,100.000,0.500,,,,");
        assert_eq!(lines[3], "cms,5,900.000,4.000,300.000,900.000,33.3,600.000");
        assert_eq!(lines[4], "");
        assert_eq!(lines.len(), 5);
    }
}
