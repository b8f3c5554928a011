use super::*;
use accelfed_accounting::repository::GroupKey;

fn row(vo: &str, year: i32, month: u32, hours: i64, idle: Option<i64>) -> SummaryRow {
    let milli = |h: i64| h * 3_600_000;
    SummaryRow {
        key: GroupKey {
            vo: Some(vo.to_owned()),
            month: Some(Period::new(year, month).unwrap()),
            ..GroupKey::default()
        },
        totals: Totals {
            records: 1,
            gpu_milli_seconds: milli(hours),
            active_records: i64::from(idle.is_some()),
            active_gpu_milli_seconds: idle.map_or(0, |i| milli(hours - i)),
            active_available_gpu_milli_seconds: idle.map_or(0, |_| milli(hours)),
            ..Totals::default()
        },
    }
}

#[test]
fn fifty_vos_over_36_months_keep_a_dozen_colours_and_the_rest_last() {
    let mut rows = Vec::new();
    for vo in 0..50 {
        for month in 0..36 {
            rows.push(row(
                &format!("vo{vo:02}"),
                2024 + month / 12,
                (month % 12 + 1) as u32,
                1 + vo as i64,
                None,
            ));
        }
    }
    let before: i64 = rows.iter().map(|r| r.totals.gpu_milli_seconds).sum();
    let filter = SummaryFilter::default();
    let usage = shape(Dimension::Vo, rows, &filter, Period::new(2026, 12).unwrap());
    assert_eq!(usage.series.len(), TOP_SERIES + 1);
    assert_eq!(usage.series[0].name, "vo49");
    assert_eq!(usage.series[TOP_SERIES].name, "(38 others)");
    assert_eq!(usage.series[TOP_SERIES].colour, OTHERS_COLOUR);
    let colours: std::collections::BTreeSet<&str> = usage.series[..TOP_SERIES]
        .iter()
        .map(|s| s.colour)
        .collect();
    assert_eq!(colours.len(), TOP_SERIES, "no colour repeats");
    assert_eq!(usage.months.len(), 36);
    assert_eq!(usage.partial, Some(Period::new(2026, 12).unwrap()));
    assert_eq!(usage.total.gpu_milli_seconds, before);
    assert_eq!(usage.csv_query, "by=vo,month&format=csv");
}

#[test]
fn idle_hours_come_from_records_that_report_activity() {
    let rows = vec![
        row("a", 2026, 1, 10, Some(4)),
        row("a", 2026, 2, 5, None),
        row("b", 2026, 3, 2, None),
    ];
    let filter = SummaryFilter {
        site: Some("CESNET MCC".into()),
        ..SummaryFilter::default()
    };
    let usage = shape(Dimension::Vo, rows, &filter, Period::new(2030, 1).unwrap());
    let a = usage.series.iter().find(|s| s.name == "a").unwrap();
    assert_eq!(idle_hours(&a.totals), Some(4.0));
    let b = usage.series.iter().find(|s| s.name == "b").unwrap();
    assert_eq!(idle_hours(&b.totals), None);
    assert_eq!(usage.partial, None);
    assert_eq!(usage.months.len(), 3);
    assert_eq!(usage.csv_query, "by=vo,month&format=csv&site=CESNET%20MCC");
}
