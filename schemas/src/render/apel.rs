//! APEL accelerator messages (`APEL-accelerator-message` v0.1), the JSON that EGI's accounting
//! repository loads from ssmsend/AMS:
//!
//! ```json
//! {"Type":"APEL-accelerator-message","Version":"0.1","UsageRecords":[{"MeasurementMonth":1,...}]}
//! ```
//!
//! Each record carries APEL's field names in APEL's order (MeasurementMonth, MeasurementYear,
//! AssociatedRecordType, AssociatedRecord, GlobalUserName, FQAN, SiteName, Count, Cores,
//! ActiveDuration, AvailableDuration, BenchmarkType, Benchmark, Type, Model); fields we do not know
//! are left out, as cASO does. Our own fields (source, VO, first/last seen, sharing, installed,
//! energy, known-idle seconds) are not sent: APEL's loader does not know them. A record whose
//! activity is known only in part (known idle beside unknown running time) is sent without
//! ActiveDuration: APEL has no field for the part.
//!
//! Rules the transport imposes, kept here so no caller can get them wrong:
//! * at most [`MAX_RECORDS`] records and at most [`MAX_BYTES`] bytes (under 1 MB) per message,
//!   split by both: AMS refuses larger messages and one refused message blocks ssmsend's queue;
//! * ASCII only: every non-ASCII character is written as a JSON `\uXXXX` escape (surrogate pairs
//!   above U+FFFF), so the text survives any transport and parses back to the original;
//! * deterministic: records are ordered by month, then record id, whatever the input order;
//! * Count with as many decimals as Count x AvailableDuration needs to stay within half a second
//!   of the record's GPU-seconds (three at least): a count of 0.0004 is written `0.0004`, not 0.
//!   (APEL's `AcceleratorRecords.Count` is `DECIMAL(10,3)`; what its database keeps of the
//!   message is its business, the message itself carries the usage exactly.)
//!
//! APEL requires FQAN. A record without one gets `/<vo>` when it has a VO (what the VO's plain
//! membership FQAN is); a record with neither is not sendable and is reported in
//! [`ApelExport::skipped`], as is a record that alone would not fit in a message.

use std::fmt::{self, Write as _};

use serde_json::{Map, Value, json};

use crate::gpu::AcceleratorType;
use crate::usage::batch::{self, Frame, Limits};
use crate::usage::{Month, RecordId, UsageRecord};

pub const MESSAGE_TYPE: &str = "APEL-accelerator-message";
pub const VERSION: &str = "0.1";
/// Records per message.
pub const MAX_RECORDS: usize = 1_000;
/// Bytes per message: strictly under 1,000,000.
pub const MAX_BYTES: usize = 999_999;

const PREFIX: &str = r#"{"Type":"APEL-accelerator-message","Version":"0.1","UsageRecords":["#;
const SUFFIX: &str = "]}";

/// Messages ready for the outgoing queue, and the records that could not go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApelExport {
    /// Each an ASCII JSON document within the limits.
    pub messages: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// A record left out of the export, and why; named by its resource and month as well as its id,
/// so the operator can find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub id: RecordId,
    /// AssociatedRecord: the VM, pod or job.
    pub resource: String,
    pub month: Month,
    pub reason: SkipReason,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record {} ({}, {}): {}",
            self.resource, self.month, self.id, self.reason
        )
    }
}

impl Skipped {
    fn new(id: RecordId, record: &UsageRecord, reason: SkipReason) -> Self {
        Self {
            id,
            resource: record.associated_record.as_str().to_owned(),
            month: record.month,
            reason,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    #[error("APEL requires an FQAN and the record has neither an FQAN nor a VO")]
    NoFqan,
    #[error("the record alone is {bytes} bytes, more than fits in one message ({MAX_BYTES})")]
    TooLarge { bytes: usize },
}

/// Renders `records` as APEL accelerator messages within the limits.
pub fn render(records: &[UsageRecord]) -> ApelExport {
    render_with(records, MAX_RECORDS, MAX_BYTES)
}

/// [`render`] with other limits (tests; a transport with a smaller cap).
pub fn render_with(records: &[UsageRecord], max_records: usize, max_bytes: usize) -> ApelExport {
    let mut ordered: Vec<(RecordId, &UsageRecord)> = records.iter().map(|r| (r.id(), r)).collect();
    ordered.sort_by(|(a_id, a), (b_id, b)| a.month.cmp(&b.month).then_with(|| a_id.cmp(b_id)));

    let mut export = ApelExport::default();
    let mut rendered: Vec<(RecordId, &UsageRecord, String)> = Vec::with_capacity(ordered.len());
    for (id, record) in ordered {
        match apel_record(record) {
            Some(value) => rendered.push((id, record, ascii_json(&value))),
            None => export
                .skipped
                .push(Skipped::new(id, record, SkipReason::NoFqan)),
        }
    }

    let sizes: Vec<usize> = rendered.iter().map(|(_, _, text)| text.len()).collect();
    let limits = Limits {
        max_items: max_records,
        max_bytes,
    };
    let frame = Frame {
        overhead: PREFIX.len() + SUFFIX.len(),
        separator: 1,
    };
    let packing = batch::pack(&sizes, limits, frame);
    for batch in packing.batches {
        let mut message = String::from(PREFIX);
        for (n, index) in batch.into_iter().enumerate() {
            if n > 0 {
                message.push(',');
            }
            message.push_str(&rendered[index].2);
        }
        message.push_str(SUFFIX);
        export.messages.push(message);
    }
    for index in packing.oversized {
        let (id, record, text) = &rendered[index];
        export.skipped.push(Skipped::new(
            id.clone(),
            record,
            SkipReason::TooLarge { bytes: text.len() },
        ));
    }
    export
}

/// One record as APEL's JSON object, fields in APEL's order; `None` without an FQAN.
fn apel_record(record: &UsageRecord) -> Option<Value> {
    let fqan = match (&record.fqan, &record.vo) {
        (Some(fqan), _) => fqan.as_str().to_owned(),
        (None, Some(vo)) => format!("/{vo}"),
        (None, None) => return None,
    };
    let mut map = Map::new();
    map.insert("MeasurementMonth".into(), json!(record.month.month()));
    map.insert("MeasurementYear".into(), json!(record.month.year()));
    map.insert(
        "AssociatedRecordType".into(),
        json!(record.record_type.as_str()),
    );
    map.insert(
        "AssociatedRecord".into(),
        json!(record.associated_record.as_str()),
    );
    if let Some(user) = &record.global_user_name {
        map.insert("GlobalUserName".into(), json!(user.as_str()));
    }
    map.insert("FQAN".into(), json!(fqan));
    map.insert("SiteName".into(), json!(record.site.as_str()));
    map.insert(
        "Count".into(),
        json!(precise_count(record.count.get(), record.available_duration)),
    );
    if let Some(cores) = record.cores {
        map.insert("Cores".into(), json!(cores));
    }
    if let Some(active) = record.active_duration {
        map.insert("ActiveDuration".into(), json!(active));
    }
    map.insert("AvailableDuration".into(), json!(record.available_duration));
    if let Some(benchmark) = &record.benchmark {
        map.insert("BenchmarkType".into(), json!(benchmark.kind.as_str()));
        map.insert("Benchmark".into(), json!(benchmark.value));
    }
    map.insert("Type".into(), json!(apel_type(record.accelerator_type)));
    map.insert("Model".into(), json!(record.model.as_str()));
    Some(Value::Object(map))
}

/// `count` rounded to the fewest decimals (at least three, APEL's column scale) such that
/// Count x AvailableDuration stays within half a second of the record's GPU-seconds, and a count
/// above zero stays above zero. Three decimals (what every other rendering uses) would turn a
/// count of 0.0004 held for a month into 0 GPU-seconds instead of about 1,071.
fn precise_count(count: f64, available_duration: u64) -> f64 {
    let seconds = count * available_duration as f64;
    let mut scale = 1_000.0_f64;
    loop {
        let rounded = (count * scale).round() / scale;
        let close = (rounded * available_duration as f64 - seconds).abs() <= 0.5;
        // 1e12 is past any duration a month holds (2,678,400 s): a stop, never reached in practice.
        if (close && (rounded > 0.0 || count == 0.0)) || scale >= 1e12 {
            return rounded;
        }
        scale *= 10.0;
    }
}

/// APEL knows GPU, FPGA and Other.
fn apel_type(kind: AcceleratorType) -> &'static str {
    match kind {
        AcceleratorType::Gpu => "GPU",
        AcceleratorType::Fpga => "FPGA",
        AcceleratorType::Mic | AcceleratorType::Other => "Other",
    }
}

/// Compact JSON with every non-ASCII character escaped. Non-ASCII can only occur inside strings in
/// serde_json's output, so escaping it there keeps the document valid and its meaning unchanged.
fn ascii_json(value: &Value) -> String {
    let text = value.to_string();
    if text.is_ascii() {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
