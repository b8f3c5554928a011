//! The page's bounds: whatever sites send, the page stays a few hundred kilobytes. Two calls with
//! 70,000 distinct VO names made it 47.8 MB, one legend entry and one series per VO (issue #30).
//! A chart shows its [`TOP_SERIES`] largest series by GPU-hours over all months and one more,
//! `(N others)`, that adds up the rest month by month; the offers table shows at most
//! [`MAX_OFFER_ROWS`] offers (the API pages through all of them) and at most [`MAX_VOS_SHOWN`] VOs
//! per offer.

use std::collections::{BTreeMap, HashMap};

use accelfed_accounting::repository::{Dimension, GroupKey, Period, SummaryRow, Totals};

/// Series drawn in one chart besides the one that adds up the rest.
pub const TOP_SERIES: usize = 12;
/// Offers listed on the page; a note says how many more the filter selects.
pub const MAX_OFFER_ROWS: usize = 500;
/// VOs named in one offer's row.
pub const MAX_VOS_SHOWN: usize = 10;

/// `rows` (grouped by `series` and month) with every series past the `top` largest added up into
/// one named `(N others)`, per month.
pub fn top_series(series: Dimension, rows: Vec<SummaryRow>, top: usize) -> Vec<SummaryRow> {
    let mut totals: HashMap<Option<String>, i64> = HashMap::new();
    for row in &rows {
        *totals.entry(row.key.get(series)).or_insert(0) += row.totals.gpu_milli_seconds;
    }
    if totals.len() <= top {
        return rows;
    }
    let mut ranked: Vec<(Option<String>, i64)> = totals.into_iter().collect();
    // Largest first; equal ones by name, so the page is the same every time.
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let others = ranked.len() - top;
    let kept: std::collections::HashSet<Option<String>> =
        ranked.into_iter().take(top).map(|(name, _)| name).collect();
    let label = format!("({others} others)");
    let mut rest: BTreeMap<Option<Period>, Totals> = BTreeMap::new();
    let mut out = Vec::with_capacity(kept.len() * 12);
    for row in rows {
        if kept.contains(&row.key.get(series)) {
            out.push(row);
        } else {
            *rest.entry(row.key.month).or_default() += row.totals;
        }
    }
    for (month, totals) in rest {
        let mut key = GroupKey {
            month,
            ..GroupKey::default()
        };
        match series {
            Dimension::Vo => key.vo = Some(label.clone()),
            Dimension::Site => key.site = Some(label.clone()),
            Dimension::Model => key.model = Some(label.clone()),
            Dimension::User => key.user = Some(label.clone()),
            Dimension::Month => {}
        }
        out.push(SummaryRow { key, totals });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(vo: &str, month: u32, hours: i64) -> SummaryRow {
        SummaryRow {
            key: GroupKey {
                vo: Some(vo.to_owned()),
                month: Some(Period::new(2026, month).unwrap()),
                ..GroupKey::default()
            },
            totals: Totals {
                records: 1,
                gpu_milli_seconds: hours * 3_600_000,
                ..Totals::default()
            },
        }
    }

    #[test]
    fn past_the_top_series_the_rest_is_one_series_per_month_that_adds_them_up() {
        let mut rows = vec![row("big", 1, 100), row("big", 2, 100), row("mid", 1, 50)];
        for i in 0..70_000 {
            rows.push(row(&format!("vo{i:05}"), 1 + (i % 2) as u32, 1));
        }
        let before: i64 = rows.iter().map(|r| r.totals.gpu_milli_seconds).sum();
        let out = top_series(Dimension::Vo, rows, 2);
        let names: std::collections::BTreeSet<String> =
            out.iter().filter_map(|r| r.key.vo.clone()).collect();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            vec!["(70000 others)", "big", "mid"]
        );
        // Two months of the rest, nothing lost.
        assert_eq!(out.len(), 3 + 2);
        let after: i64 = out.iter().map(|r| r.totals.gpu_milli_seconds).sum();
        assert_eq!(before, after);
    }

    #[test]
    fn few_series_are_left_as_they_are() {
        let rows = vec![row("a", 1, 1), row("b", 1, 2)];
        assert_eq!(top_series(Dimension::Vo, rows.clone(), 20), rows);
    }
}
