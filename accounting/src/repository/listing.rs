//! A site's own records, a page at a time, as the report API lists them to that site: what each
//! stored row says, in the units reports use (GPUs, GPU-hours, RFC 3339 times), in a stable order
//! (month, then record id) so pages do not overlap while records arrive in other months.

use serde::Serialize;

use super::row::{COLUMNS, RecordRow};

/// The most records one page holds.
pub const MAX_PER_PAGE: u32 = 10_000;

/// The SQL of one page: `site` as parameter 1, then limit and offset, in the backend's syntax.
pub(crate) fn page_sql(placeholder: fn(usize) -> String) -> String {
    format!(
        "SELECT {} FROM records WHERE site = {} ORDER BY period, record_id LIMIT {} OFFSET {}",
        COLUMNS.join(", "),
        placeholder(1),
        placeholder(2),
        placeholder(3),
    )
}

/// One stored record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListedRecord {
    /// The record id (SHA-256 of its identity), hex.
    pub record_id: String,
    pub month: String,
    pub site: String,
    pub vo: Option<String>,
    pub model: String,
    pub record_type: String,
    pub associated_record: String,
    pub global_user_name: Option<String>,
    pub fqan: Option<String>,
    /// Physical GPUs, as the record counts them (unrounded where stored so).
    pub gpus: f64,
    pub cores: Option<i64>,
    pub available_seconds: i64,
    pub active_seconds: Option<i64>,
    /// GPUs x available time.
    pub gpu_hours: f64,
    /// What stood behind the count (the record's sharing, JSON), absent for whole GPUs.
    pub sharing: Option<serde_json::Value>,
    pub installed: Option<f64>,
    /// Watt-hours the held GPUs used in the month, where the site measured it; left out elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_wh: Option<f64>,
    /// Seconds known idle where `active_seconds` is unknown (a VM's stopped stretches in a month
    /// it also ran); left out where none are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_seconds: Option<i64>,
    pub source: String,
    pub first_seen: Option<String>,
    pub last_seen: Option<String>,
}

impl ListedRecord {
    pub(crate) fn of(row: RecordRow) -> Self {
        let gpus = row.gpu_count.unwrap_or(row.gpu_milli as f64 / 1000.0);
        let time = |micros: Option<i64>| {
            micros
                .and_then(chrono::DateTime::from_timestamp_micros)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        };
        Self {
            record_id: row.record_id.iter().map(|b| format!("{b:02x}")).collect(),
            month: row.period.to_string(),
            site: row.site.to_string(),
            vo: row.vo.map(|v| v.to_string()),
            model: row.model.to_string(),
            record_type: row.record_type.into_owned(),
            associated_record: row.associated_record.to_string(),
            global_user_name: row.global_user_name.map(|v| v.to_string()),
            fqan: row.fqan.map(|v| v.to_string()),
            gpus,
            cores: row.cores,
            available_seconds: row.available_seconds,
            active_seconds: row.active_seconds,
            gpu_hours: gpus * row.available_seconds as f64 / 3600.0,
            sharing: row
                .sharing
                .and_then(|text| serde_json::from_str(&text).ok()),
            installed: row.installed,
            energy_wh: row.energy_wh,
            idle_seconds: row.idle_seconds,
            source: row.source.into_owned(),
            first_seen: time(row.first_seen),
            last_seen: time(row.last_seen),
        }
    }
}

/// One page of a site's records, and whether more follow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordPage {
    pub records: Vec<ListedRecord>,
    pub more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_in_a_stable_order() {
        let sql = page_sql(|n| format!("${n}"));
        assert!(sql.starts_with("SELECT record_id, period, site,"));
        assert!(sql.ends_with(
            "FROM records WHERE site = $1 ORDER BY period, record_id LIMIT $2 OFFSET $3"
        ));
    }
}
