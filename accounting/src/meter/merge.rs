//! Monthly pieces of one resource -> one record per holding: every period counts (never "last one
//! wins"), and holdings that APEL would otherwise file under one identity get identities of their
//! own.
//!
//! A *holding* is what one record describes: one resource (VM, pod, job) on one physical GPU model
//! in one month, charged to one VO and FQAN, under one sharing. The pieces of a holding (its periods
//! in the month: a VM stopped and started, a manual file with one line per period) merge into one
//! record:
//!
//! * AvailableDuration = the sum of the periods' seconds;
//! * Count = the periods' GPU-seconds over that sum, unrounded, so Count x AvailableDuration is the
//!   GPU-seconds of all periods (exact to the second: the only error left is f64's, far below one);
//! * ActiveDuration = the periods' active GPU-seconds over Count (the plain sum of the periods'
//!   ActiveDurations when their counts are equal); unknown when any period's is unknown;
//! * IdleDuration (known idle), only where ActiveDuration is unknown: the idle GPU-seconds of the
//!   periods that know theirs (AvailableDuration - ActiveDuration, or their own IdleDuration) over
//!   Count; absent where no period knows any. A VM running 10 h (activity unknown) and stopped 5 h
//!   (ActiveDuration 0) is 15 h held, ActiveDuration unknown, 5 h known idle;
//! * first_seen the earliest, last_seen the latest; the other fields (user, cores, benchmark,
//!   source) from the period seen last.
//!
//! Periods of one holding that overlap (two lines of a manual file covering the same days, two
//! backends reporting one resource) can sum past the month's length, which no valid record holds.
//! The record is then capped: AvailableDuration becomes the month's seconds and Count grows so that
//! the GPU-seconds stay what the periods say; the cap is reported ([`Capped`]) and the capacity
//! check ([`super::capacity`]) still sees every GPU-second.
//!
//! APEL's identity of a record is (site, kind, resource, model, month). When one resource holds
//! more than one holding of one model in one month (a node lent to atlas, then to cms; a VM resized
//! from a whole GPU to a vGPU of the same model), each holding gets an AssociatedRecord of its own:
//! `<resource>@<VO>` (the FQAN instead of the VO where the VOs agree but the FQANs differ; `-` for
//! usage of no VO) and `<resource>#<sharing>` (`mig:3g.40gb`, `time-slicing:8`, `mps:4`,
//! `vgpu:GRID A100-10C`, `whole`, `fraction`), both where both differ. A resource with one holding
//! in the month keeps its plain id, so records of ordinary resources keep the ids they always had.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use accelfed_schemas::gpu::{GpuCount, Sharing};
use accelfed_schemas::names::LocalId;
use accelfed_schemas::usage::{Month, RecordType, UsageRecord};

/// A holding whose periods overlapped: more seconds than its month has.
#[derive(Debug, Clone, PartialEq)]
pub struct Capped {
    /// The record's identity in words (site, kind, resource, model, month).
    pub identity: String,
    /// The periods' summed seconds, before the cap.
    pub seconds: u64,
    /// The month's seconds (the record's AvailableDuration after the cap).
    pub month_seconds: u64,
}

/// The key of a holding (see the module documentation), in a deterministic order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Holding {
    resource: Resource,
    vo: Option<String>,
    fqan: Option<String>,
    sharing: Sharing,
}

/// What APEL identifies a record by: the resource, its model and month at a site.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Resource {
    site: String,
    record_type: RecordType,
    associated_record: String,
    model: String,
    month: Month,
}

/// A holding's periods, summed.
struct Sum {
    gpu_seconds: f64,
    seconds: u64,
    /// `None` once a period without an ActiveDuration was seen.
    active_gpu_seconds: Option<f64>,
    /// Idle GPU-seconds of the periods that know them; `None` while no period did.
    idle_gpu_seconds: Option<f64>,
    /// `None` once a period without energy was seen: a part is not the holding's energy.
    energy_wh: Option<f64>,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
    periods: usize,
    /// The period seen last (latest `last_seen`; on a tie, the later in the input).
    latest: UsageRecord,
}

impl Sum {
    fn new(record: UsageRecord) -> Self {
        Self {
            gpu_seconds: record.gpu_seconds(),
            seconds: record.available_duration,
            active_gpu_seconds: record
                .active_duration
                .map(|active| record.count.get() * active as f64),
            idle_gpu_seconds: known_idle(&record),
            energy_wh: record.energy_wh,
            first_seen: record.first_seen,
            last_seen: record.last_seen,
            periods: 1,
            latest: record,
        }
    }

    fn add(&mut self, record: UsageRecord) {
        self.gpu_seconds += record.gpu_seconds();
        self.seconds = self.seconds.saturating_add(record.available_duration);
        self.active_gpu_seconds = match (self.active_gpu_seconds, record.active_duration) {
            (Some(sum), Some(active)) => Some(sum + record.count.get() * active as f64),
            _ => None,
        };
        self.idle_gpu_seconds = match (self.idle_gpu_seconds, known_idle(&record)) {
            (Some(sum), Some(idle)) => Some(sum + idle),
            (sum, idle) => sum.or(idle),
        };
        self.energy_wh = self.energy_wh.zip(record.energy_wh).map(|(a, b)| a + b);
        self.first_seen = self.first_seen.min(record.first_seen);
        self.last_seen = self.last_seen.max(record.last_seen);
        self.periods += 1;
        if record.last_seen >= self.latest.last_seen {
            self.latest = record;
        }
    }

    /// The holding's one record, and whether it had to be capped.
    fn finish(self) -> (UsageRecord, Option<Capped>) {
        let mut record = self.latest;
        record.first_seen = self.first_seen;
        record.last_seen = self.last_seen;
        if self.periods == 1 {
            // One period: the record as the meter built it, so ids and values of ordinary
            // resources are exactly what they were before periods were merged.
            return (record, None);
        }
        let month_seconds = record.month.seconds();
        let capped = (self.seconds > month_seconds).then(|| Capped {
            identity: record.identity().to_string(),
            seconds: self.seconds,
            month_seconds,
        });
        let seconds = self.seconds.min(month_seconds);
        // seconds > 0 (every piece has at least one) and gpu_seconds > 0 (every count is), so the
        // quotient is finite and positive.
        let count = self.gpu_seconds / seconds as f64;
        record.count = GpuCount::new(count).unwrap_or(record.count);
        record.available_duration = seconds;
        record.energy_wh = self.energy_wh;
        record.active_duration = self.active_gpu_seconds.map(|active| {
            let duration = (active / count).round();
            // Never above the available time, whatever rounding did.
            (duration.max(0.0) as u64).min(seconds)
        });
        // Where ActiveDuration is known it says the idle time itself; otherwise the known part.
        record.idle_duration = match record.active_duration {
            Some(_) => None,
            None => self.idle_gpu_seconds.map(|idle| {
                let duration = (idle / count).round();
                (duration.max(0.0) as u64).min(seconds)
            }),
        };
        (record, capped)
    }
}

/// A period's idle GPU-seconds where it knows them: all but its active time where that is known,
/// else its own known-idle time.
fn known_idle(record: &UsageRecord) -> Option<f64> {
    let idle = match record.active_duration {
        Some(active) => Some(record.available_duration.saturating_sub(active)),
        None => record.idle_duration,
    };
    idle.map(|seconds| record.count.get() * seconds as f64)
}

/// Merges the monthly pieces of every holding into one record each and gives holdings that share
/// an APEL identity identities of their own (see the module documentation). The output is sorted
/// by (site, kind, resource, model, month, VO, FQAN, sharing), whatever the input order.
pub fn merge_periods(pieces: Vec<UsageRecord>) -> (Vec<UsageRecord>, Vec<Capped>) {
    let mut holdings: BTreeMap<Holding, Sum> = BTreeMap::new();
    for piece in pieces {
        let key = Holding {
            resource: Resource {
                site: piece.site.as_str().to_owned(),
                record_type: piece.record_type,
                associated_record: piece.associated_record.as_str().to_owned(),
                model: piece.model.as_str().to_owned(),
                month: piece.month,
            },
            vo: piece.vo.as_ref().map(|vo| vo.as_str().to_owned()),
            fqan: piece.fqan.as_ref().map(|fqan| fqan.as_str().to_owned()),
            sharing: piece.sharing.clone(),
        };
        match holdings.get_mut(&key) {
            Some(sum) => sum.add(piece),
            None => {
                holdings.insert(key, Sum::new(piece));
            }
        }
    }
    let mut by_resource: BTreeMap<Resource, Vec<(Holding, UsageRecord)>> = BTreeMap::new();
    let mut capped = Vec::new();
    for (key, sum) in holdings {
        let (record, cap) = sum.finish();
        capped.extend(cap);
        by_resource
            .entry(key.resource.clone())
            .or_default()
            .push((key, record));
    }
    let mut records = Vec::new();
    for (_, group) in by_resource {
        if group.len() == 1 {
            records.extend(group.into_iter().map(|(_, record)| record));
            continue;
        }
        let split_vo = differ(group.iter().map(|(key, _)| (&key.vo, &key.fqan)));
        let split_sharing = differ(group.iter().map(|(key, _)| &key.sharing));
        let level = if split_vo {
            vo_level(group.iter().map(|(key, _)| key))
        } else {
            0
        };
        for (key, mut record) in group {
            let mut id = record.associated_record.as_str().to_owned();
            if split_vo {
                id.push('@');
                id.push_str(&vo_label(&key, level));
            }
            if split_sharing {
                id.push('#');
                id.push_str(&sharing_label(&key.sharing));
            }
            // A valid id with printable suffixes is a valid id; keep the plain one otherwise
            // (unreachable, and the spool would then refuse the duplicate by name).
            if let Ok(local) = LocalId::new(id) {
                record.associated_record = local;
            }
            records.push(record);
        }
    }
    (records, capped)
}

/// Whether the values are not all equal.
fn differ<T: PartialEq>(mut values: impl Iterator<Item = T>) -> bool {
    match values.next() {
        Some(first) => values.any(|value| value != first),
        None => false,
    }
}

/// The VO part of a split identity at `level`: 0 the VO, 1 the FQAN (or the VO where there is
/// none), 2 both; `-` for usage of no VO.
fn vo_label(key: &Holding, level: u8) -> String {
    let vo = key.vo.as_deref().unwrap_or("-");
    match (level, &key.fqan) {
        (0, _) | (_, None) => vo.to_owned(),
        (1, Some(fqan)) => fqan.clone(),
        (_, Some(fqan)) => format!("{vo}{fqan}"),
    }
}

/// The first level of [`vo_label`] that tells every (VO, FQAN) pair of the holdings apart: the
/// plain VO in the common case (a node lent to atlas, then to cms), the FQAN where one VO's roles
/// differ, both where even that is not enough.
fn vo_level<'a>(keys: impl Iterator<Item = &'a Holding> + Clone) -> u8 {
    let pairs: std::collections::BTreeSet<(&Option<String>, &Option<String>)> =
        keys.clone().map(|key| (&key.vo, &key.fqan)).collect();
    for level in 0..2 {
        let labels: std::collections::BTreeSet<String> =
            keys.clone().map(|key| vo_label(key, level)).collect();
        if labels.len() == pairs.len() {
            return level;
        }
    }
    2
}

/// The sharing part of a split identity.
fn sharing_label(sharing: &Sharing) -> String {
    match sharing {
        Sharing::Whole | Sharing::Fraction => sharing.mode().to_owned(),
        Sharing::Mig { profile, .. } => format!("mig:{profile}"),
        Sharing::TimeSlicing { replicas } | Sharing::Mps { replicas } => {
            format!("{}:{replicas}", sharing.mode())
        }
        Sharing::Vgpu { vgpu_type, .. } => format!("vgpu:{vgpu_type}"),
    }
}
