//! JSON: one object with the grouping, the month range, the month still running (`partial_month`),
//! a row per group and the total. Absent figures (active time nobody reported) are `null`, never
//! 0, so a consumer can tell them apart. Rows of a report grouped by month carry `partial`.

use serde_json::{Map, Value, json};

use super::{Report, active_percent, idle_hours, shows_energy};
use crate::repository::{Dimension, Totals};

pub(super) fn render(report: &Report) -> String {
    if shows_energy(report) {
        document(report, figures_with_energy)
    } else {
        document(report, figures)
    }
}

/// The JSON document of `report`, each row's and the total's figures from `figures`.
pub(super) fn document(report: &Report, figures: fn(&Totals) -> Map<String, Value>) -> String {
    let rows: Vec<Value> = report
        .lines
        .iter()
        .map(|line| {
            let mut row = Map::new();
            for (dimension, key) in report.by.dimensions().iter().zip(&line.key) {
                row.insert(dimension.name().to_owned(), Value::from(key.clone()));
            }
            row.extend(figures(&line.totals));
            if report.by.contains(Dimension::Month) {
                row.insert("partial".into(), report.is_partial(line).into());
            }
            Value::Object(row)
        })
        .collect();
    let document = json!({
        "by": report.by.to_string(),
        "from": report.from.map(|p| p.to_string()),
        "to": report.to.map(|p| p.to_string()),
        "partial_month": report.partial.map(|p| p.to_string()),
        "rows": rows,
        "total": Value::Object(figures(&report.total)),
    });
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// A group's figures.
fn figures(t: &Totals) -> Map<String, Value> {
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    let mut map = Map::new();
    map.insert("records".into(), t.records.into());
    map.insert("gpu_hours".into(), round(t.gpu_hours()).into());
    map.insert("mean_gpus".into(), t.mean_gpus().map(round).into());
    map.insert(
        "active_gpu_hours".into(),
        t.active_gpu_hours().map(round).into(),
    );
    map.insert(
        "active_available_gpu_hours".into(),
        t.active_available_gpu_hours().map(round).into(),
    );
    map.insert(
        "active_percent".into(),
        active_percent(t).map(|p| (p * 10.0).round() / 10.0).into(),
    );
    map.insert("idle_gpu_hours".into(), idle_hours(t).map(round).into());
    map
}

/// [`figures`] and `energy_wh` (null for a group none of whose records carries it), for a report
/// in which some record carries its energy.
fn figures_with_energy(t: &Totals) -> Map<String, Value> {
    let mut map = figures(t);
    let energy = t.energy_wh().map(|v| (v * 1000.0).round() / 1000.0);
    map.insert("energy_wh".into(), energy.into());
    map
}

#[cfg(test)]
mod tests {
    use super::super::{TextFormat, sample};

    #[test]
    fn renders_rows_and_total() {
        let text = sample::report().render(TextFormat::Json);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["by"], "vo");
        assert_eq!(value["from"], "2026-01");
        assert_eq!(value["rows"][0]["vo"], "atlas");
        assert_eq!(value["rows"][0]["gpu_hours"], 4500.0);
        assert_eq!(value["rows"][0]["active_percent"], 77.8);
        assert_eq!(
            value["rows"][1]["active_gpu_hours"],
            serde_json::Value::Null
        );
        assert_eq!(value["total"]["records"], 30);
        assert_eq!(value["total"]["gpu_hours"], 5500.0);
        assert_eq!(value["rows"][0]["idle_gpu_hours"], 1000.0);
        assert_eq!(value["partial_month"], serde_json::Value::Null);
    }
}
