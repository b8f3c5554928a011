//! The node agents as a meter source for every backend: what `accelfed agent` measured per holder
//! (a Slurm job, a Kubernetes pod, a VM) fills the ActiveDuration and energy of the backend's
//! observation of the same holder, month by month.
//!
//! The agents' JSON documents (`/v1/state`, format version 1; see the agent's `render` module)
//! carry per holder and place (a GPU, a MIG instance, a vGPU) the held, idle and energy counters
//! of each calendar month. A holder's months are summed over its places. An observation is matched
//! to a holder by its resource: a job's `<cluster>:<jobid>` to the Slurm job id after the last
//! `:`, a pod's `<cluster>/<namespace>/<uid>` to the pod UID after the last `/`, a VM's UUID to
//! the VM (libvirt domain UUID = Nova server id).
//!
//! A matched observation is cut into one observation per month, each with that month's figures:
//! * ActiveDuration is held minus idle: the month's seconds less the mean idle seconds of the
//!   holder's places. Idle is only what an agent saw; time no agent saw (before it started, a gap)
//!   is not counted idle.
//! * Energy is the month's energy of the holder's places (their GPUs' energy counters, shared by
//!   held time on a shared GPU), in watt-hours.
//!
//! A month no agent knows keeps what the backend gave (its utilisation, or none), and a holder no
//! agent knows is left as it was: nothing is guessed.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::Deserialize;

use accelfed_schemas::usage::{Observation, RecordType};

use super::split::split_months;

/// The agent document format this meter reads.
const FORMAT_VERSION: u64 = 1;

/// The counters of one holder summed over its places, per month (`2026-01`).
#[derive(Debug, Clone, Default, PartialEq)]
struct Holding {
    places: BTreeSet<String>,
    months: BTreeMap<String, MonthCounters>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
struct MonthCounters {
    held_seconds: f64,
    idle_seconds: f64,
    energy_joules: f64,
}

#[derive(Deserialize)]
struct Document {
    format_version: u64,
    holders: Vec<HolderDocument>,
}

#[derive(Deserialize)]
struct HolderDocument {
    kind: String,
    id: String,
    place: String,
    #[serde(default)]
    months: BTreeMap<String, MonthCounters>,
}

/// What the agents of a site measured, by holder (`slurm_job`, `kubernetes_pod`, `vm`) and id.
#[derive(Debug, Clone, Default)]
pub struct AgentUsage {
    holders: BTreeMap<(String, String), Holding>,
}

impl AgentUsage {
    /// Adds one agent's document; returns how many holders it named. A place counted twice (the
    /// same document read twice) is counted once.
    pub fn add_document(&mut self, text: &[u8]) -> Result<usize, String> {
        let document: Document = serde_json::from_slice(text)
            .map_err(|e| format!("not an agent state document: {e}"))?;
        if document.format_version != FORMAT_VERSION {
            return Err(format!(
                "agent state document of format version {}, this meter reads {FORMAT_VERSION}",
                document.format_version
            ));
        }
        let count = document.holders.len();
        for holder in document.holders {
            let holding = self.holders.entry((holder.kind, holder.id)).or_default();
            if !holding.places.insert(holder.place) {
                continue;
            }
            for (month, counters) in holder.months {
                if ![
                    counters.held_seconds,
                    counters.idle_seconds,
                    counters.energy_joules,
                ]
                .iter()
                .all(|v| v.is_finite() && *v >= 0.0)
                {
                    return Err(format!("month {month}: counters must be non-negative"));
                }
                let sum = holding.months.entry(month).or_default();
                sum.held_seconds += counters.held_seconds;
                sum.idle_seconds += counters.idle_seconds;
                sum.energy_joules += counters.energy_joules;
            }
        }
        Ok(count)
    }

    /// Whether no agent named any holder.
    pub fn is_empty(&self) -> bool {
        self.holders.is_empty()
    }

    /// `observations` with the agents' figures filled in (see the module documentation), and how
    /// many of them an agent knew.
    pub fn apply(
        &self,
        observations: Vec<Observation>,
        now: DateTime<Utc>,
    ) -> (Vec<Observation>, usize) {
        let mut matched = 0;
        let mut out = Vec::with_capacity(observations.len());
        for observation in observations {
            let holding = holder_of(&observation).and_then(|key| self.holders.get(&key));
            match holding {
                Some(holding) if !holding.months.is_empty() => {
                    matched += 1;
                    out.extend(per_month(&observation, holding, now));
                }
                _ => out.push(observation),
            }
        }
        (out, matched)
    }
}

/// The agent holder (kind, id) an observation stands for (see the module documentation): also
/// how `accelfed idle --config` finds the VO and user of an idle holder.
pub fn holder_of(observation: &Observation) -> Option<(String, String)> {
    let resource = observation.resource.as_str();
    let after = |separator: char| resource.rsplit(separator).next().map(str::to_owned);
    match observation.record_type {
        RecordType::Job => Some(("slurm_job".to_owned(), after(':')?)),
        RecordType::Cloud if resource.contains('/') => {
            Some(("kubernetes_pod".to_owned(), after('/')?))
        }
        RecordType::Cloud => Some(("vm".to_owned(), resource.to_owned())),
    }
}

/// The observation cut into its months, each with the agents' figures where they have the month.
fn per_month(observation: &Observation, holding: &Holding, now: DateTime<Utc>) -> Vec<Observation> {
    let pieces = split_months(observation.start, observation.end, now);
    let total_seconds: u64 = pieces.iter().map(|piece| piece.seconds).sum();
    let places = holding.places.len().max(1) as f64;
    pieces
        .into_iter()
        .map(|piece| {
            let mut month = observation.clone();
            month.start = piece.first_seen;
            month.end = Some(piece.last_seen);
            let seconds = piece.seconds as f64;
            match holding.months.get(&piece.month.to_string()) {
                Some(counters) => {
                    let idle = (counters.idle_seconds / places).round().min(seconds);
                    month.utilisation = Some((seconds - idle) / seconds);
                    month.energy_wh = Some(counters.energy_joules / 3600.0);
                }
                None => {
                    // total_seconds >= piece.seconds > 0.
                    month.energy_wh = observation
                        .energy_wh
                        .map(|energy| energy * seconds / total_seconds as f64);
                }
            }
            month
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::super::records_for;
    use super::*;

    fn at(m: u32, d: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, m, d, 0, 0, 0).unwrap()
    }

    fn job(resource: &str) -> Observation {
        let mut observation = super::super::tests::held(
            resource,
            accelfed_schemas::gpu::Sharing::Whole,
            2.0,
            at(1, 31),
            at(2, 2),
        );
        observation.record_type = RecordType::Job;
        observation.utilisation = Some(0.9);
        observation
    }

    fn document() -> Vec<u8> {
        let month = |held: f64, idle: f64, joules: f64| {
            json!({"held_seconds": held, "active_seconds": held - idle, "idle_seconds": idle,
                   "unknown_seconds": 0.0, "energy_joules": joules})
        };
        json!({
            "format_version": 1,
            "holders": [
                {"kind": "slurm_job", "id": "42", "place": "GPU-a",
                 "months": {"2026-01": month(86_400.0, 86_400.0, 3_600_000.0),
                            "2026-02": month(86_400.0, 43_200.0, 7_200_000.0)}},
                {"kind": "slurm_job", "id": "42", "place": "GPU-b",
                 "months": {"2026-01": month(86_400.0, 86_400.0, 3_600_000.0)}},
            ],
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_known_job_gets_each_months_active_time_and_energy() {
        let mut agents = AgentUsage::default();
        assert_eq!(agents.add_document(&document()), Ok(2));
        assert_eq!(
            agents.add_document(&document()),
            Ok(2),
            "read twice, counted once"
        );
        let (observations, matched) = agents.apply(vec![job("cluster:42")], at(3, 1));
        assert_eq!((observations.len(), matched), (2, 1));
        let records: Vec<_> = observations
            .iter()
            .flat_map(|o| records_for(o, at(3, 1)).unwrap())
            .collect();
        let figures: Vec<_> = records
            .iter()
            .map(|r| (r.available_duration, r.active_duration, r.energy_wh))
            .collect();
        // January: both GPUs idle all day. February: one GPU idle half of its day, the other
        // unseen there: a mean of 21,600 idle seconds of the month's 86,400.
        assert_eq!(
            figures,
            [
                (86_400, Some(0), Some(2000.0)),
                (86_400, Some(64_800), Some(2000.0))
            ]
        );
    }

    #[test]
    fn an_unknown_holder_keeps_what_its_backend_gave() {
        let mut agents = AgentUsage::default();
        agents.add_document(&document()).unwrap();
        let other = job("cluster:43");
        let (observations, matched) = agents.apply(vec![other.clone()], at(3, 1));
        assert_eq!((observations, matched), (vec![other], 0));
        assert!(
            agents
                .add_document(b"{\"format_version\": 2, \"holders\": []}")
                .is_err()
        );
        assert!(agents.add_document(b"[]").is_err());
    }
}
