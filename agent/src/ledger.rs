//! The counters: per holder and GPU (or MIG / vGPU instance) the held, active, idle and unknown
//! seconds and the energy; per GPU what was observed, and the energy no holder took.
//!
//! A window is the time between two readings of a GPU. Holders present at a reading held the GPU
//! for the window that ends there; the window's energy (the counter's rise) is shared equally
//! among them, so over time a shared GPU's energy is shared by held time. A window without
//! holders, or longer than the attributable gap (the agent was down), counts its energy as
//! unattributed. The last reading's time and energy counter are part of the state, so after a
//! restart the first window starts where the saved state ended: nothing counted twice.
//!
//! Each entry also keeps its counters per calendar month (UTC) of the window's end, so the meter
//! can fill each month's record exactly; a window that straddles midnight of a month's last day
//! counts whole in the month it ends in (one period, seconds at most).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::holder::Holder;
use crate::idle::{Activity, IdleRule};
use crate::reading::GpuReading;

/// The state file's format version.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    pub version: u32,
    /// By GPU UUID.
    pub gpus: BTreeMap<String, GpuTotals>,
    /// By [`entry_key`]: one holder on one place.
    pub entries: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuTotals {
    pub model: String,
    /// Unix milliseconds of the last reading: the next window's start.
    pub last_reading_ms: Option<u64>,
    /// The energy counter (mJ) at the last reading.
    pub last_energy_mj: Option<u64>,
    pub observed_seconds: f64,
    pub energy_joules: f64,
    /// Seconds with no holder, and their energy (with that of unattributed gaps).
    pub unheld_seconds: f64,
    pub unattributed_energy_joules: f64,
    /// Windows too long to attribute (the agent was not running).
    pub gap_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub holder: Holder,
    pub gpu_uuid: String,
    /// The GPU's UUID, or the MIG or vGPU instance's.
    pub place: String,
    pub model: String,
    pub held_seconds: f64,
    pub active_seconds: f64,
    pub idle_seconds: f64,
    pub unknown_seconds: f64,
    pub energy_joules: f64,
    pub first_seen_ms: u64,
    pub last_seen_ms: u64,
    /// The start of the run of idle windows the holder is in now; `None` once active.
    pub idle_since_ms: Option<u64>,
    pub last_activity: Activity,
    /// The same counters per month (`2026-01`); absent from state files older than the field,
    /// whose counts before it are in the totals only.
    #[serde(default)]
    pub months: BTreeMap<String, MonthCounters>,
}

/// One holder's counters on one place within one calendar month.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonthCounters {
    pub held_seconds: f64,
    pub active_seconds: f64,
    pub idle_seconds: f64,
    pub unknown_seconds: f64,
    pub energy_joules: f64,
}

/// The calendar month (UTC) of a Unix millisecond, as `2026-01`.
fn month_of(unix_ms: u64) -> String {
    i64::try_from(unix_ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(String::new, |time| time.format("%Y-%m").to_string())
}

/// The key of one holder on one place.
pub fn entry_key(holder: &Holder, place: &str) -> String {
    format!("{holder}@{place}")
}

impl Ledger {
    pub fn new() -> Self {
        Self {
            version: VERSION,
            ..Self::default()
        }
    }

    /// Counts, for every GPU read, the window that ends at its reading (`read_at_ms`).
    pub fn apply(&mut self, readings: &[GpuReading], rule: &IdleRule, max_gap_ms: u64) {
        for reading in readings {
            self.apply_gpu(reading, rule, max_gap_ms);
        }
    }

    fn apply_gpu(&mut self, reading: &GpuReading, rule: &IdleRule, max_gap_ms: u64) {
        let now_ms = reading.read_at_ms;
        let gpu_uuid = &reading.identity.uuid;
        let gpu = self.gpus.entry(gpu_uuid.clone()).or_default();
        gpu.model.clone_from(&reading.identity.model);
        let window_ms = gpu
            .last_reading_ms
            .filter(|last| *last < now_ms)
            .map(|last| now_ms - last);
        let energy_joules = match (gpu.last_energy_mj, reading.energy_mj) {
            // A counter that went down restarted with the driver: that window's energy is unknown.
            (Some(before), Some(after)) if after >= before => (after - before) as f64 / 1000.0,
            _ => 0.0,
        };
        if gpu.last_reading_ms.is_some_and(|last| last >= now_ms) {
            return; // the clock went back: wait for it to pass the last reading
        }
        gpu.last_reading_ms = Some(now_ms);
        gpu.last_energy_mj = reading.energy_mj;

        // One holder may have several processes on a place: one holding, the busiest's activity.
        let mut holdings: BTreeMap<(Holder, String), Option<f64>> = BTreeMap::new();
        for holding in &reading.holdings {
            let slot = holdings
                .entry((holding.holder.clone(), holding.place.clone()))
                .or_insert(holding.highest_sm_percent);
            *slot = match (*slot, holding.highest_sm_percent) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }

        let window_seconds = window_ms.map(|ms| ms as f64 / 1000.0);
        match window_ms {
            Some(ms) if ms <= max_gap_ms => {
                let seconds = ms as f64 / 1000.0;
                gpu.observed_seconds += seconds;
                gpu.energy_joules += energy_joules;
                if holdings.is_empty() {
                    gpu.unheld_seconds += seconds;
                    gpu.unattributed_energy_joules += energy_joules;
                }
            }
            Some(ms) => {
                gpu.gap_seconds += ms as f64 / 1000.0;
                gpu.energy_joules += energy_joules;
                gpu.unattributed_energy_joules += energy_joules;
            }
            None => {}
        }
        let attributed = window_ms.is_some_and(|ms| ms <= max_gap_ms);
        let share = if holdings.is_empty() {
            0.0
        } else {
            energy_joules / holdings.len() as f64
        };
        for ((holder, place), highest) in holdings {
            let activity = rule.classify(highest);
            let entry = self
                .entries
                .entry(entry_key(&holder, &place))
                .or_insert_with(|| Entry {
                    holder: holder.clone(),
                    gpu_uuid: gpu_uuid.clone(),
                    place: place.clone(),
                    model: reading.identity.model.clone(),
                    held_seconds: 0.0,
                    active_seconds: 0.0,
                    idle_seconds: 0.0,
                    unknown_seconds: 0.0,
                    energy_joules: 0.0,
                    first_seen_ms: now_ms,
                    last_seen_ms: now_ms,
                    idle_since_ms: None,
                    last_activity: activity,
                    months: BTreeMap::new(),
                });
            entry.last_seen_ms = now_ms;
            entry.last_activity = activity;
            let (Some(seconds), true) = (window_seconds, attributed) else {
                if activity == Activity::Idle && entry.idle_since_ms.is_none() {
                    entry.idle_since_ms = Some(now_ms);
                }
                continue;
            };
            entry.held_seconds += seconds;
            entry.energy_joules += share;
            let month = entry.months.entry(month_of(now_ms)).or_default();
            month.held_seconds += seconds;
            month.energy_joules += share;
            match activity {
                Activity::Active => {
                    entry.active_seconds += seconds;
                    month.active_seconds += seconds;
                    entry.idle_since_ms = None;
                }
                Activity::Idle => {
                    entry.idle_seconds += seconds;
                    month.idle_seconds += seconds;
                    entry
                        .idle_since_ms
                        .get_or_insert(now_ms - window_ms.unwrap_or(0));
                }
                Activity::Unknown => {
                    entry.unknown_seconds += seconds;
                    month.unknown_seconds += seconds;
                }
            }
        }
    }

    /// Drops entries not seen since `before_ms` (the meter has read them long since).
    pub fn prune(&mut self, before_ms: u64) {
        self.entries
            .retain(|_, entry| entry.last_seen_ms >= before_ms);
    }

    /// Whether the entry's holder was present at its GPU's last reading.
    pub fn holding_now(&self, entry: &Entry) -> bool {
        self.gpus
            .get(&entry.gpu_uuid)
            .and_then(|gpu| gpu.last_reading_ms)
            == Some(entry.last_seen_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::{GpuIdentity, Holding};

    fn reading(read_at_ms: u64, energy_mj: u64, sm: f64) -> GpuReading {
        GpuReading {
            identity: GpuIdentity {
                uuid: "GPU-a".into(),
                index: 0,
                name: "NVIDIA H200".into(),
                model: "NVIDIA H200".into(),
                memory_total_bytes: None,
                mig_mode: None,
                mig_instances: Vec::new(),
                vgpu_instances: Vec::new(),
            },
            utilisation_percent: None,
            memory_used_bytes: None,
            power_mw: None,
            energy_mj: Some(energy_mj),
            read_at_ms,
            holdings: vec![Holding {
                holder: Holder::SlurmJob("7".into()),
                place: "GPU-a".into(),
                pids: vec![1],
                highest_sm_percent: Some(sm),
                memory_bytes: None,
            }],
        }
    }

    #[test]
    fn windows_count_in_the_month_they_end_in() {
        // 2026-01-31T23:59:50Z and on, 10 s apart: idle into January, busy into February.
        let end_of_january = 1_769_903_990_000;
        let mut ledger = Ledger::new();
        let rule = IdleRule::default();
        for (i, sm) in [0.0, 0.0, 100.0, 100.0].into_iter().enumerate() {
            let at = end_of_january + 10_000 * i as u64 - 10_000;
            ledger.apply(&[reading(at, 1_000_000 * i as u64, sm)], &rule, 60_000);
        }
        let entry = ledger.entries.values().next().expect("the job");
        let months: Vec<_> = entry
            .months
            .iter()
            .map(|(m, c)| (m.as_str(), c.held_seconds, c.idle_seconds, c.energy_joules))
            .collect();
        assert_eq!(
            months,
            [
                ("2026-01", 10.0, 10.0, 1000.0),
                ("2026-02", 20.0, 0.0, 2000.0)
            ]
        );
        assert_eq!(entry.held_seconds, 30.0, "the totals are the months' sum");
    }
}
