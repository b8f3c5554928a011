//! What a report asks of the summary table: a grouping and a filter, turned into one SQL query that
//! both backends run with their own placeholder syntax.

use std::fmt;
use std::str::FromStr;

use super::period::Period;
use super::totals::{SUMMED, Totals};

/// A dimension a report groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    Vo,
    Site,
    Model,
    Month,
    /// The record's GlobalUserName: not in `summaries`, so a report by user reads the user rollup
    /// (`user_summaries`, the same totals split by user).
    User,
}

impl Dimension {
    pub const ALL: [Dimension; 5] = [
        Dimension::Vo,
        Dimension::Site,
        Dimension::Model,
        Dimension::Month,
        Dimension::User,
    ];

    /// The summary-table column. A closed set, so building SQL from it cannot inject anything.
    fn column(self) -> &'static str {
        match self {
            Dimension::Vo => "vo",
            Dimension::Site => "site",
            Dimension::Model => "model",
            Dimension::Month => "period",
            Dimension::User => "global_user_name",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dimension::Vo => "vo",
            Dimension::Site => "site",
            Dimension::Model => "model",
            Dimension::Month => "month",
            Dimension::User => "user",
        }
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dimension {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                format!("unknown dimension {s:?}; expected vo, site, model, month or user")
            })
    }
}

/// Which summary rows count. Every bound is inclusive; `None` means unbounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryFilter {
    pub from: Option<Period>,
    pub to: Option<Period>,
    pub vo: Option<String>,
    pub site: Option<String>,
    pub model: Option<String>,
}

/// Totals grouped by some dimensions (in the given order) under a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryQuery {
    pub group_by: Vec<Dimension>,
    pub filter: SummaryFilter,
}

/// One group's key: the value of each grouped dimension, `None` for those not grouped.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupKey {
    pub vo: Option<String>,
    pub site: Option<String>,
    pub model: Option<String>,
    pub month: Option<Period>,
    /// Empty for records that name no user.
    pub user: Option<String>,
}

impl GroupKey {
    /// The key's value for one dimension, as text.
    pub fn get(&self, dimension: Dimension) -> Option<String> {
        match dimension {
            Dimension::Vo => self.vo.clone(),
            Dimension::Site => self.site.clone(),
            Dimension::Model => self.model.clone(),
            Dimension::Month => self.month.map(|m| m.to_string()),
            Dimension::User => self.user.clone(),
        }
    }
}

/// One result row of a summary query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRow {
    pub key: GroupKey,
    pub totals: Totals,
}

/// A bound parameter of a built query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    Int(i32),
    Text(String),
}

/// The SQL of a summary query and its parameters. `placeholder(n)` spells the n-th (1-based)
/// parameter in the backend's syntax (`?1` for SQLite, `$1` for PostgreSQL). The sums are cast to
/// 64-bit integers so PostgreSQL returns `bigint`, not `numeric`.
pub(crate) fn build_sql(
    query: &SummaryQuery,
    placeholder: fn(usize) -> String,
) -> (String, Vec<Param>) {
    let mut conditions = Vec::new();
    let mut params = Vec::new();
    let mut bind = |condition: &str, param: Param, params: &mut Vec<Param>| {
        params.push(param);
        conditions.push(format!("{condition} {}", placeholder(params.len())));
    };
    let f = &query.filter;
    if let Some(from) = f.from {
        bind("period >=", Param::Int(from.index()), &mut params);
    }
    if let Some(to) = f.to {
        bind("period <=", Param::Int(to.index()), &mut params);
    }
    for (column, value) in [("vo", &f.vo), ("site", &f.site), ("model", &f.model)] {
        if let Some(value) = value {
            bind(
                &format!("{column} ="),
                Param::Text(value.clone()),
                &mut params,
            );
        }
    }
    let columns: Vec<&str> = query.group_by.iter().map(|d| d.column()).collect();
    let mut sql = String::from("SELECT ");
    for column in &columns {
        sql.push_str(column);
        sql.push_str(", ");
    }
    let sums: Vec<String> = SUMMED
        .iter()
        .map(|c| format!("CAST(SUM({c}) AS BIGINT)"))
        .collect();
    sql.push_str(&sums.join(", "));
    // The user rollup holds the same totals split by user: only a grouping by user needs it.
    sql.push_str(if query.group_by.contains(&Dimension::User) {
        " FROM user_summaries"
    } else {
        " FROM summaries"
    });
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    // Rows a replacement emptied (records = 0) stay in the table; they must not show as groups.
    sql.push_str(if conditions.is_empty() {
        " WHERE"
    } else {
        " AND"
    });
    sql.push_str(" records <> 0");
    if !columns.is_empty() {
        let list = columns.join(", ");
        sql.push_str(&format!(" GROUP BY {list} ORDER BY {list}"));
    }
    (sql, params)
}

/// One result row of [`build_sql`]'s query: the `group_by` columns in their order, then the
/// sums in [`SUMMED`]'s order. Both backends decode through it, each reading column `i` its own way
/// (`text`, `month`, `int`), so the layout `build_sql` writes is read back in this one file.
pub(crate) fn summary_row<E>(
    group_by: &[Dimension],
    text: impl Fn(usize) -> Result<String, E>,
    month: impl Fn(usize) -> Result<Period, E>,
    int: impl Fn(usize) -> Result<i64, E>,
) -> Result<SummaryRow, E> {
    let mut key = GroupKey::default();
    for (i, dimension) in group_by.iter().enumerate() {
        match dimension {
            Dimension::Vo => key.vo = Some(text(i)?),
            Dimension::Site => key.site = Some(text(i)?),
            Dimension::Model => key.model = Some(text(i)?),
            Dimension::Month => key.month = Some(month(i)?),
            Dimension::User => key.user = Some(text(i)?),
        }
    }
    let n = group_by.len();
    let mut sums = [0; SUMMED.len()];
    for (i, sum) in sums.iter_mut().enumerate() {
        *sum = int(n + i)?;
    }
    Ok(SummaryRow {
        key,
        totals: Totals::from_summed(sums),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_grouped_filtered_sql() {
        let query = SummaryQuery {
            group_by: vec![Dimension::Vo, Dimension::Month],
            filter: SummaryFilter {
                from: Some("2026-01".parse().unwrap()),
                site: Some("CESNET".into()),
                ..SummaryFilter::default()
            },
        };
        let (sql, params) = build_sql(&query, |n| format!("${n}"));
        assert!(sql.starts_with("SELECT vo, period, CAST(SUM(records)"));
        assert!(sql.ends_with(
            "FROM summaries WHERE period >= $1 AND site = $2 AND records <> 0 GROUP BY vo, period ORDER BY vo, period"
        ));
        let by_user = SummaryQuery {
            group_by: vec![Dimension::User],
            ..query.clone()
        };
        let (sql, _) = build_sql(&by_user, |n| format!("${n}"));
        assert!(sql.starts_with("SELECT global_user_name, CAST(SUM(records)"));
        assert!(sql.contains(" FROM user_summaries WHERE "), "{sql}");
        assert_eq!(
            params,
            vec![Param::Int(2026 * 12), Param::Text("CESNET".into())]
        );
    }

    #[test]
    fn parses_dimensions() {
        assert_eq!("month".parse::<Dimension>(), Ok(Dimension::Month));
        assert_eq!("user".parse::<Dimension>(), Ok(Dimension::User));
        assert!("users".parse::<Dimension>().is_err());
    }
}
