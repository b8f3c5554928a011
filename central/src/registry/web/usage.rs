//! Who used the GPUs and what sat idle: the repository's summaries per VO, site and GPU model per
//! month, shaped for a chart ([`super::chart`]) and the table under it. Each chart keeps its
//! [`TOP_SERIES`] largest series and adds up the rest as one ([`super::top`]), so a federation of
//! hundreds of VOs still draws a dozen colours that can be told apart.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use accelfed_accounting::repository::{
    Dimension, Period, Repository, SummaryFilter, SummaryQuery, SummaryRow, Totals,
};

use super::top::{TOP_SERIES, top_series};

/// Colours told apart also by most colour-blind readers (Okabe-Ito, then Tableau), one per series
/// of the [`TOP_SERIES`]; the added-up rest is grey.
pub const PALETTE: [&str; TOP_SERIES] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#8C564B",
    "#17BECF", "#9467BD", "#BCBD22", "#E377C2",
];
pub const OTHERS_COLOUR: &str = "#AEB5BD";

/// One series of a chart: a VO, a site, a model, or the rest added up.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub colour: &'static str,
    pub hours: BTreeMap<Period, f64>,
    pub totals: Totals,
}

/// One chart's data: series largest first (the rest last), the months of its axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    pub dimension: Dimension,
    pub series: Vec<Series>,
    pub months: Vec<Period>,
    /// The month still running, when the axis reaches it.
    pub partial: Option<Period>,
    pub total: Totals,
    /// The report API query of the same numbers (`by=<dimension>,month` and the filter).
    pub csv_query: String,
}

/// The usage part of the page.
#[derive(Debug, Clone, PartialEq)]
pub enum UsageState {
    /// `accelfed serve` runs without an accounting repository.
    NoRepository,
    /// `[access] anonymous = false`: the page (anonymous) shows no usage.
    NotPublic,
    /// The repository could not be read (the reason, for the page).
    Unavailable(String),
    /// One chart per dimension; none when nothing is recorded.
    Charts(Vec<Usage>),
}

/// The charts for the page: per VO, site and model, within `filter` (a site's or a VO's page
/// leaves out the chart of its own dimension). A repository that fails gives a message.
pub async fn load(
    repository: Option<&Repository>,
    public: bool,
    filter: SummaryFilter,
    now: DateTime<Utc>,
) -> UsageState {
    let Some(repository) = repository else {
        return UsageState::NoRepository;
    };
    if !public {
        return UsageState::NotPublic;
    }
    let mut charts = Vec::new();
    for dimension in [Dimension::Vo, Dimension::Site, Dimension::Model] {
        let fixed = match dimension {
            Dimension::Vo => filter.vo.is_some(),
            Dimension::Site => filter.site.is_some(),
            _ => false,
        };
        if fixed {
            continue;
        }
        let query = SummaryQuery {
            group_by: vec![dimension, Dimension::Month],
            filter: filter.clone(),
        };
        match repository.summaries(query).await {
            Ok(rows) if rows.is_empty() => {}
            Ok(rows) => charts.push(shape(dimension, rows, &filter, Period::of(now))),
            Err(error) => {
                tracing::warn!(%error, "web page: accounting summaries unavailable");
                return UsageState::Unavailable(error.to_string());
            }
        }
    }
    UsageState::Charts(charts)
}

/// `rows` grouped by (`dimension`, month) as a chart: the largest series, the rest added up.
pub fn shape(
    dimension: Dimension,
    rows: Vec<SummaryRow>,
    filter: &SummaryFilter,
    current: Period,
) -> Usage {
    let rows = top_series(dimension, rows, TOP_SERIES);
    let mut by_name: BTreeMap<String, Series> = BTreeMap::new();
    let mut total = Totals::default();
    let (mut first, mut last): (Option<Period>, Option<Period>) = (None, None);
    for row in rows {
        let name = row.key.get(dimension).unwrap_or_default();
        let series = by_name.entry(name.clone()).or_insert_with(|| Series {
            name,
            colour: OTHERS_COLOUR,
            hours: BTreeMap::new(),
            totals: Totals::default(),
        });
        series.totals += row.totals;
        total += row.totals;
        if let Some(month) = row.key.month {
            *series.hours.entry(month).or_default() += row.totals.gpu_hours();
            first = Some(first.map_or(month, |f| f.min(month)));
            last = Some(last.map_or(month, |l| l.max(month)));
        }
    }
    let mut series: Vec<Series> = by_name.into_values().collect();
    // Largest first, equal ones by name; the added-up rest last whatever its size.
    series.sort_by(|a, b| {
        is_rest(&a.name)
            .cmp(&is_rest(&b.name))
            .then(b.totals.gpu_milli_seconds.cmp(&a.totals.gpu_milli_seconds))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut colours = PALETTE.iter();
    for one in &mut series {
        if !is_rest(&one.name) {
            one.colour = colours.next().copied().unwrap_or(OTHERS_COLOUR);
        }
    }
    let mut months = Vec::new();
    if let (Some(first), Some(last)) = (first, last) {
        let mut month = first;
        while month <= last {
            months.push(month);
            month = month.next();
        }
    }
    let mut csv_query = format!("by={},month&format=csv", dimension.name());
    for (name, value) in [
        ("vo", &filter.vo),
        ("site", &filter.site),
        ("model", &filter.model),
    ] {
        if let Some(value) = value {
            csv_query.push_str(&format!("&{name}={}", query_escape(value)));
        }
    }
    Usage {
        dimension,
        partial: months.contains(&current).then_some(current),
        series,
        months,
        total,
        csv_query,
    }
}

/// Whether `name` is the added-up rest of [`top_series`] (`(N others)`; names of VOs, sites and
/// models do not start with a parenthesis).
fn is_rest(name: &str) -> bool {
    name.starts_with('(') && name.ends_with(" others)")
}

/// `text` for a URL query value: unreserved characters as they are, the rest percent-encoded.
pub fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Idle GPU-hours of `totals`, by the reports' one rule (available minus active where the active
/// time is known, plus known-idle time where it is not); `None` when no record knows either.
pub fn idle_hours(totals: &Totals) -> Option<f64> {
    totals.idle_gpu_hours()
}

#[cfg(test)]
mod tests;
