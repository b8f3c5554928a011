//! A table for a terminal: right-aligned figures, a rule under the header and a total line; the
//! month still running is marked `*`, with a note under the table.

use super::{Report, active_percent, hours, idle_hours, shows_energy, watt_hours};
use crate::repository::{Dimension, Totals};

const HEADERS: [&str; 7] = [
    "RECORDS",
    "GPU-HOURS",
    "MEAN GPUS",
    "ACTIVE GPU-H",
    "OF AVAILABLE",
    "ACTIVE %",
    "IDLE GPU-H",
];

pub(super) fn render(report: &Report) -> String {
    if shows_energy(report) {
        let mut headers = HEADERS.to_vec();
        headers.push("ENERGY WH");
        layout(report, &headers, figures_with_energy)
    } else {
        layout(report, &HEADERS, figures)
    }
}

/// The table of `report` with the figure columns `headers`, each line's cells from `figures`
/// (which writes `-` for a figure nobody reported).
pub(super) fn layout(
    report: &Report,
    headers: &[&str],
    figures: fn(&Totals) -> Vec<String>,
) -> String {
    let cells = |mut key: Vec<String>, t: &Totals| {
        key.extend(figures(t));
        key
    };
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(report.lines.len() + 3);
    let dimensions = report.by.dimensions();
    let mut header: Vec<String> = dimensions.iter().map(|d| d.name().to_uppercase()).collect();
    header.extend(headers.iter().map(|h| (*h).to_owned()));
    rows.push(header);
    let mut marked = false;
    for line in &report.lines {
        let mut key = line.key.clone();
        if report.is_partial(line)
            && let Some(i) = dimensions.iter().position(|d| *d == Dimension::Month)
        {
            key[i].push('*');
            marked = true;
        }
        rows.push(cells(key, &line.totals));
    }
    let mut total_key = vec![String::new(); dimensions.len()];
    total_key[0] = "TOTAL".to_owned();
    rows.push(cells(total_key, &report.total));
    let keys = dimensions.len();
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let last = rows.len() - 1;
    for (i, row) in rows.iter().enumerate() {
        if i == last {
            push_rule(&mut out, &widths);
        }
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c < keys {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str("  ");
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            }
        }
        // The last key column of the total line is padded like the others: no trailing spaces.
        while out.ends_with(' ') {
            out.pop();
        }
        out.push('\n');
        if i == 0 {
            push_rule(&mut out, &widths);
        }
    }
    if marked {
        out.push_str("* month still running: its figures will grow\n");
    }
    out
}

fn figures(t: &Totals) -> Vec<String> {
    let dash = || "-".to_owned();
    vec![
        t.records.to_string(),
        hours(t.gpu_hours()),
        t.mean_gpus()
            .map(|m| format!("{m:.3}"))
            .unwrap_or_else(dash),
        t.active_gpu_hours().map(hours).unwrap_or_else(dash),
        t.active_available_gpu_hours()
            .map(hours)
            .unwrap_or_else(dash),
        active_percent(t)
            .map(|p| format!("{p:.1}"))
            .unwrap_or_else(dash),
        idle_hours(t).map(hours).unwrap_or_else(dash),
    ]
}

/// [`figures`] and the energy, for a report in which some record carries its energy.
fn figures_with_energy(t: &Totals) -> Vec<String> {
    let mut cells = figures(t);
    cells.push(
        t.energy_wh()
            .map(watt_hours)
            .unwrap_or_else(|| "-".to_owned()),
    );
    cells
}

fn push_rule(out: &mut String, widths: &[usize]) {
    let total = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    out.push_str(&"-".repeat(total));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::super::{TextFormat, sample};

    #[test]
    fn aligns_columns_with_a_total() {
        let table = sample::report().render(TextFormat::Table);
        let expected = "\
VO            RECORDS  GPU-HOURS  MEAN GPUS  ACTIVE GPU-H  OF AVAILABLE  ACTIVE %  IDLE GPU-H
---------------------------------------------------------------------------------------------
atlas              22   4500.000      4.000      3500.000      4500.000      77.8    1000.000
biomed, \"eu\"        3    100.000      0.500             -             -         -           -
cms                 5    900.000      4.000       300.000       900.000      33.3     600.000
---------------------------------------------------------------------------------------------
TOTAL              30   5500.000      3.650      3800.000      5400.000      70.4    1600.000
";
        assert_eq!(table, expected);
    }

    #[test]
    fn energy_shows_where_records_carry_it_and_is_absent_elsewhere() {
        let mut rows = sample::rows();
        rows[0].totals.energy_records = 10;
        rows[0].totals.energy_milli_wh = 1_234_567;
        let report = super::super::Report::from_rows(
            super::super::Grouping::one(crate::repository::Dimension::Vo),
            None,
            None,
            &rows,
        );
        let table = report.render(TextFormat::Table);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].ends_with("IDLE GPU-H  ENERGY WH"), "{table}");
        assert!(lines[2].ends_with("1234.567"), "{table}");
        assert!(lines[3].ends_with(" -"), "biomed carries none: {table}");
        assert!(lines[6].ends_with("1234.567"), "{table}");
        let json: serde_json::Value =
            serde_json::from_str(&report.render(TextFormat::Json)).unwrap();
        assert_eq!(json["rows"][0]["energy_wh"], 1234.567);
        assert_eq!(json["rows"][1]["energy_wh"], serde_json::Value::Null);
        let csv = report.render(TextFormat::Csv);
        assert!(csv.starts_with("vo,records") && csv.contains("idle_gpu_hours,energy_wh\r\n"));
        assert!(csv.contains(",1000.000,1234.567\r\n"), "{csv}");
        let none = sample::report();
        assert!(!none.render(TextFormat::Table).contains("ENERGY"));
        assert!(!none.render(TextFormat::Json).contains("energy"));
    }
}
