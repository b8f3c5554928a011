//! Reports that group by user. The summary table has no user column (it would multiply its rows
//! by every user of every VO), so these read the records under the filter and sum each record's
//! own [`RecordRow::totals`], the very figures ingest adds to the summaries: a report by VO and
//! user adds up to the report by VO. Reading records costs a scan of the filter's months, so the
//! report API offers it to those who may see users (a VO manager for their VO, a site for itself),
//! whose filters narrow it.

use std::collections::BTreeMap;

use accelfed_schemas::gpu::GpuModel;

use super::query::{Dimension, GroupKey, Param, SummaryFilter, SummaryRow};
use super::row::{COLUMNS, RecordRow};
use super::totals::Totals;

/// The records under `filter` but its model (matched by words afterwards, as reports match it):
/// SQL with the backend's `placeholder`, and its parameters.
pub(crate) fn records_sql(
    filter: &SummaryFilter,
    placeholder: fn(usize) -> String,
) -> (String, Vec<Param>) {
    let mut conditions: Vec<String> = Vec::new();
    let mut params = Vec::new();
    let bind =
        |condition: &str, param: Param, params: &mut Vec<Param>, conditions: &mut Vec<String>| {
            params.push(param);
            conditions.push(format!("{condition} {}", placeholder(params.len())));
        };
    if let Some(from) = filter.from {
        bind(
            "period >=",
            Param::Int(from.index()),
            &mut params,
            &mut conditions,
        );
    }
    if let Some(to) = filter.to {
        bind(
            "period <=",
            Param::Int(to.index()),
            &mut params,
            &mut conditions,
        );
    }
    match filter.vo.as_deref() {
        // Summaries file records of no VO under the empty VO; the records keep NULL.
        Some("") => conditions.push("vo IS NULL".to_owned()),
        Some(vo) => bind(
            "vo =",
            Param::Text(vo.to_owned()),
            &mut params,
            &mut conditions,
        ),
        None => {}
    }
    if let Some(site) = &filter.site {
        bind(
            "site =",
            Param::Text(site.clone()),
            &mut params,
            &mut conditions,
        );
    }
    let mut sql = format!("SELECT {} FROM records", COLUMNS.join(", "));
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    (sql, params)
}

/// Sums records into groups by `group_by`, as [`super::Repository::summaries`] returns them.
#[derive(Debug, Default)]
pub(crate) struct Fold {
    groups: BTreeMap<GroupKey, Totals>,
}

impl Fold {
    /// Adds `row` when its model matches `model` (by words, as reports match).
    pub(crate) fn add(&mut self, row: &RecordRow, group_by: &[Dimension], model: Option<&str>) {
        if let Some(wanted) = model {
            let have = &*row.model;
            let matches = have == wanted || GpuModel::new(have).is_ok_and(|m| m.matches(wanted));
            if !matches {
                return;
            }
        }
        let mut key = GroupKey::default();
        for dimension in group_by {
            match dimension {
                Dimension::Vo => key.vo = Some(row.vo.as_deref().unwrap_or_default().to_owned()),
                Dimension::Site => key.site = Some(row.site.to_string()),
                Dimension::Model => key.model = Some(row.model.to_string()),
                Dimension::Month => key.month = Some(row.period),
                Dimension::User => {
                    key.user = Some(
                        row.global_user_name
                            .as_deref()
                            .unwrap_or_default()
                            .to_owned(),
                    );
                }
            }
        }
        *self.groups.entry(key).or_default() += row.totals();
    }

    pub(crate) fn rows(self) -> Vec<SummaryRow> {
        self.groups
            .into_iter()
            .map(|(key, totals)| SummaryRow { key, totals })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repository::row::sample::row;

    #[test]
    fn selects_the_filters_records_and_sums_them_per_user() {
        let filter = SummaryFilter {
            from: Some("2026-01".parse().unwrap()),
            vo: Some("atlas".into()),
            ..SummaryFilter::default()
        };
        let (sql, params) = records_sql(&filter, |n| format!("${n}"));
        assert!(
            sql.ends_with("FROM records WHERE period >= $1 AND vo = $2"),
            "{sql}"
        );
        assert_eq!(params.len(), 2);
        let mut fold = Fold::default();
        let by = [Dimension::User];
        let mut alice = row(1, "atlas", 1000, 3600);
        alice.global_user_name = Some("alice".into());
        let mut bob = row(2, "atlas", 2000, 3600);
        bob.global_user_name = Some("bob".into());
        let mut alice_again = row(3, "atlas", 1000, 7200);
        alice_again.global_user_name = Some("alice".into());
        for r in [&alice, &bob, &alice_again] {
            fold.add(r, &by, None);
        }
        let rows = fold.rows();
        let users: Vec<(String, f64)> = rows
            .iter()
            .map(|r| (r.key.user.clone().unwrap(), r.totals.gpu_hours()))
            .collect();
        assert_eq!(users, [("alice".into(), 3.0), ("bob".into(), 2.0)]);
    }
}
