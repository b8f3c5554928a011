//! What APEL's accelerator loader and its MySQL database accept, checked record by record before
//! a record goes into a message, so that one bad record is refused alone instead of making the
//! loader reject its whole message (1,000 records).
//!
//! Facts from APEL's accelerator schema and record class (pull request #459 of apel/apel):
//!
//! * every text column is `VARCHAR(255)`: longer text is "Data too long";
//! * the database's character set is MySQL's `utf8` (3-byte, `utf8mb3`): characters outside the
//!   Basic Multilingual Plane (emoji, U+10000 and up) cannot be stored; some sites run `latin1`;
//! * the loader turns `None`, `null` and the empty string (any case) into NULL before checking
//!   mandatory fields (AssociatedRecordType, AssociatedRecord, FQAN, SiteName, Count, Type, Model,
//!   MeasurementMonth, MeasurementYear); FQAN is exempt from that conversion;
//! * `Count` is `DECIMAL(10,3)`, `Benchmark` `DECIMAL(10,3)`, durations and `Cores` are `INT`;
//! * the primary key is (MeasurementMonth, MeasurementYear, AssociatedRecordType,
//!   AssociatedRecord, Site, Model) compared under the column collation, case- and
//!   accent-insensitive (`utf8_general_ci`): `GPU-Node-1` and `gpu-node-1` are one row there.
//!
//! The rules (docs/operations.md, "APEL export"):
//!
//! * GlobalUserName and BenchmarkType, which identify nothing, are **normalised**: each character
//!   the database cannot store becomes `?` (what MySQL itself writes for it when not strict), and
//!   a null-like GlobalUserName is left out (APEL would store NULL);
//! * every other problem **refuses** the record, with an error naming the resource, the month and
//!   the field: a null-like mandatory value, text over 255 characters, a character the database
//!   cannot store in an identifying field, a number past its column, no FQAN and no VO;
//! * records whose APEL key is the same once case and accents are folded: the first (in byte
//!   order of their text within a batch; an earlier batch before a later one, see [`Checker`])
//!   goes, each other one is refused naming the one it collides with.

use std::collections::BTreeMap;

use accelfed_schemas::names::Text;
use accelfed_schemas::usage::{Month, RecordId, UsageRecord};
use unicode_normalization::UnicodeNormalization as _;

/// The character set of the APEL database the records end in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Charset {
    /// MySQL's `utf8` (`utf8mb3`): the Basic Multilingual Plane.
    #[default]
    Utf8mb3,
    /// MySQL's `latin1`: U+0000 to U+00FF.
    Latin1,
}

impl Charset {
    fn stores(self, c: char) -> bool {
        match self {
            Self::Utf8mb3 => u32::from(c) <= 0xFFFF,
            Self::Latin1 => u32::from(c) <= 0xFF,
        }
    }
}

/// `VARCHAR(255)`: MySQL counts characters.
pub const MAX_TEXT_CHARS: usize = 255;
/// `DECIMAL(10,3)`: seven digits before the point.
pub const MAX_DECIMAL: f64 = 9_999_999.999;
/// `INT`.
pub const MAX_INT: u64 = i32::MAX as u64;

/// A record APEL would not take, named so the operator can find it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record {resource} ({month}, {id}), field {field}: {reason}; not exported to APEL")]
pub struct Refused {
    pub id: RecordId,
    /// AssociatedRecord as the spool has it.
    pub resource: String,
    pub month: Month,
    /// APEL's field name.
    pub field: &'static str,
    pub reason: String,
}

/// A change made so that APEL can store a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalised {
    pub id: RecordId,
    pub resource: String,
    pub field: &'static str,
    pub what: String,
}

/// The outcome of [`check`].
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// The records APEL accepts, normalised, in input order.
    pub records: Vec<UsageRecord>,
    pub refused: Vec<Refused>,
    pub normalised: Vec<Normalised>,
}

/// Checks `records` (one site's, or several) against APEL's loader and database; see the module
/// documentation for the rules. Pure; the meter and the export both call it.
pub fn check(records: Vec<UsageRecord>, charset: Charset) -> Checked {
    Checker::new(charset).check(records)
}

/// [`check`] over several batches (the export's pages): a key taken in an earlier batch stays
/// taken, so records that collide in different batches are found too. Holds each passed record's
/// key (a few hundred bytes a record) for as long as it lives.
#[derive(Debug, Clone, Default)]
pub struct Checker {
    charset: Charset,
    /// Folded APEL key -> the exact key and the resource of the record that holds it.
    keys: BTreeMap<String, (String, String)>,
}

impl Checker {
    pub fn new(charset: Charset) -> Self {
        Self {
            charset,
            keys: BTreeMap::new(),
        }
    }

    /// Takes the key of `record` (if it passes its own checks) before any batch, so that whichever
    /// run a record comes in, the one that holds a folded key is the same: the smallest exact key
    /// among those seeded, as [`Checker::check`] decides within a batch. The export seeds a
    /// month's every stored record, so a record colliding with one an earlier run sent is refused.
    pub fn seed(&mut self, record: UsageRecord) {
        let Ok(record) = check_record(record, self.charset, &mut Vec::new()) else {
            return;
        };
        let exact = exact_key(&record);
        let holder = (exact.clone(), record.associated_record.as_str().to_owned());
        match self.keys.entry(fold(&exact)) {
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(holder);
            }
            std::collections::btree_map::Entry::Occupied(mut entry) => {
                if exact < entry.get().0 {
                    entry.insert(holder);
                }
            }
        }
    }

    /// Checks one batch; within it, of records that collide, the one with the smallest exact key
    /// wins whatever the input order.
    pub fn check(&mut self, records: Vec<UsageRecord>) -> Checked {
        let mut checked = Checked::default();
        let mut passed = Vec::with_capacity(records.len());
        for record in records {
            match check_record(record, self.charset, &mut checked.normalised) {
                Ok(record) => passed.push(record),
                Err(refused) => checked.refused.push(refused),
            }
        }
        let mut order: Vec<usize> = (0..passed.len()).collect();
        order.sort_by_cached_key(|&i| exact_key(&passed[i]));
        let mut keep = vec![true; passed.len()];
        for i in order {
            let record = &passed[i];
            let exact = exact_key(record);
            let folded = fold(&exact);
            match self.keys.get(&folded) {
                // The same record again (a later batch re-checking it) is no collision.
                Some((held, _)) if *held == exact => {}
                Some((_, holder)) => {
                    keep[i] = false;
                    checked.refused.push(refusal(
                        record,
                        "AssociatedRecord",
                        format!(
                            "APEL's key (record, site, model, month) compares case- and \
                             accent-insensitively, and this record's equals that of \
                             {holder:?}: one would replace the other"
                        ),
                    ));
                }
                None => {
                    let resource = record.associated_record.as_str().to_owned();
                    self.keys.insert(folded, (exact, resource));
                }
            }
        }
        checked.records = passed
            .into_iter()
            .zip(keep)
            .filter_map(|(record, keep)| keep.then_some(record))
            .collect();
        checked
    }
}

/// One record's own checks (everything but collisions).
pub fn check_record(
    mut record: UsageRecord,
    charset: Charset,
    normalised: &mut Vec<Normalised>,
) -> Result<UsageRecord, Refused> {
    let fqan = match (&record.fqan, &record.vo) {
        (Some(fqan), _) => fqan.as_str().to_owned(),
        (None, Some(vo)) => format!("/{vo}"),
        (None, None) => {
            return Err(refusal(
                &record,
                "FQAN",
                "APEL requires an FQAN and the record has neither an FQAN nor a VO \
                 (map its project, namespace or account to a VO)"
                    .to_owned(),
            ));
        }
    };
    // The identifying and mandatory text: refused, never changed.
    let mandatory = [
        ("AssociatedRecord", record.associated_record.as_str()),
        ("SiteName", record.site.as_str()),
        ("Model", record.model.as_str()),
        ("FQAN", fqan.as_str()),
    ];
    for (field, value) in mandatory {
        if field != "FQAN" && null_like(value) {
            return Err(refusal(
                &record,
                field,
                format!("{value:?} is what APEL's loader reads as NULL, in a mandatory field"),
            ));
        }
        text_fits(&record, field, value, charset)?;
    }

    if let Some(user) = &record.global_user_name {
        if null_like(user.as_str()) {
            normalised.push(change(&record, "GlobalUserName", "null-like, left out"));
            record.global_user_name = None;
        } else if let Some(fixed) = storable(user.as_str(), charset) {
            normalised.push(change(
                &record,
                "GlobalUserName",
                "characters the database cannot store written as '?'",
            ));
            record.global_user_name = Text::new(fixed).ok();
        }
    }
    if let Some(user) = &record.global_user_name {
        text_fits(&record, "GlobalUserName", user.as_str(), charset)?;
    }
    let storable_kind = record
        .benchmark
        .as_ref()
        .and_then(|benchmark| storable(benchmark.kind.as_str(), charset))
        .and_then(|fixed| Text::new(fixed).ok());
    if let Some(kind) = storable_kind {
        normalised.push(change(
            &record,
            "BenchmarkType",
            "characters the database cannot store written as '?'",
        ));
        if let Some(benchmark) = &mut record.benchmark {
            benchmark.kind = kind;
        }
    }
    if let Some(benchmark) = &record.benchmark {
        text_fits(&record, "BenchmarkType", benchmark.kind.as_str(), charset)?;
        if !benchmark.value.is_finite() || benchmark.value.abs() > MAX_DECIMAL {
            return Err(refusal(
                &record,
                "Benchmark",
                format!("{} does not fit DECIMAL(10,3)", benchmark.value),
            ));
        }
    }

    if record.count.get() > MAX_DECIMAL {
        return Err(refusal(
            &record,
            "Count",
            format!("{} does not fit DECIMAL(10,3)", record.count),
        ));
    }
    let integers = [
        ("AvailableDuration", Some(record.available_duration)),
        ("ActiveDuration", record.active_duration),
        ("Cores", record.cores.map(u64::from)),
    ];
    for (field, value) in integers {
        if let Some(value) = value.filter(|v| *v > MAX_INT) {
            return Err(refusal(
                &record,
                field,
                format!("{value} is more than an INT holds ({MAX_INT})"),
            ));
        }
    }
    Ok(record)
}

/// APEL's loader reads these (any case) as NULL.
fn null_like(value: &str) -> bool {
    value.is_empty() || value.eq_ignore_ascii_case("none") || value.eq_ignore_ascii_case("null")
}

/// Refuses text longer than the column or with characters the database cannot store.
fn text_fits(
    record: &UsageRecord,
    field: &'static str,
    value: &str,
    charset: Charset,
) -> Result<(), Refused> {
    let chars = value.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(refusal(
            record,
            field,
            format!("{chars} characters, more than APEL's VARCHAR({MAX_TEXT_CHARS}) holds"),
        ));
    }
    if let Some(c) = value.chars().find(|c| !charset.stores(*c)) {
        return Err(refusal(
            record,
            field,
            format!(
                "{c:?} (U+{:04X}) cannot be stored in a {} database",
                u32::from(c),
                match charset {
                    Charset::Utf8mb3 => "MySQL utf8 (3-byte)",
                    Charset::Latin1 => "MySQL latin1",
                }
            ),
        ));
    }
    Ok(())
}

/// `value` with each character the charset cannot store as `?`; `None` when it stores them all.
fn storable(value: &str, charset: Charset) -> Option<String> {
    value.chars().any(|c| !charset.stores(c)).then(|| {
        value
            .chars()
            .map(|c| if charset.stores(c) { c } else { '?' })
            .collect()
    })
}

/// The text of APEL's key as the record would write it.
fn exact_key(record: &UsageRecord) -> String {
    format!(
        "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        record.month,
        record.record_type.as_str(),
        record.associated_record.as_str(),
        record.site.as_str(),
        record.model.as_str()
    )
}

/// Case and accents folded the way MySQL's `utf8_general_ci` compares (decompose, drop the
/// combining marks, lower-case); trailing spaces are ignored by MySQL's PAD SPACE collations.
pub fn fold(text: &str) -> String {
    text.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .split('\u{0}')
        .map(|part| part.trim_end_matches(' '))
        .collect::<Vec<_>>()
        .join("\u{0}")
}

/// The combining-mark blocks NFD moves accents into.
fn is_combining_mark(c: char) -> bool {
    matches!(u32::from(c),
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

fn refusal(record: &UsageRecord, field: &'static str, reason: String) -> Refused {
    Refused {
        id: record.id(),
        resource: record.associated_record.as_str().to_owned(),
        month: record.month,
        field,
        reason,
    }
}

fn change(record: &UsageRecord, field: &'static str, what: &str) -> Normalised {
    Normalised {
        id: record.id(),
        resource: record.associated_record.as_str().to_owned(),
        field,
        what: what.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
