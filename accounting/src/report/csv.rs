//! CSV (RFC 4180): a header line, one line per group, no total line (a spreadsheet sums itself).

use super::{Report, active_percent, hours};

/// Column names: the grouping dimension, then the figures.
const FIGURES: [&str; 6] = [
    "records",
    "gpu_hours",
    "mean_gpus",
    "active_gpu_hours",
    "active_available_gpu_hours",
    "active_percent",
];

pub(super) fn render(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(report.by.name());
    for name in FIGURES {
        out.push(',');
        out.push_str(name);
    }
    out.push_str("\r\n");
    for line in &report.lines {
        let t = &line.totals;
        let fields = [
            field(&line.key),
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
        ];
        out.push_str(&fields.join(","));
        out.push_str("\r\n");
    }
    out
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
            "vo,records,gpu_hours,mean_gpus,active_gpu_hours,active_available_gpu_hours,active_percent"
        );
        assert_eq!(lines[1], "atlas,22,4500.000,4.000,3500.000,4500.000,77.8");
        assert_eq!(lines[2], "\"biomed, \"\"eu\"\"\",3,100.000,0.500,,,");
        assert_eq!(lines[3], "cms,5,900.000,4.000,300.000,900.000,33.3");
        assert_eq!(lines[4], "");
        assert_eq!(lines.len(), 5);
    }
}
