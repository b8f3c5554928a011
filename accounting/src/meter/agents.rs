//! The node agents as a meter source for every backend: what `accelfed agent` measured per holder
//! (a Slurm job, a Kubernetes pod, a VM) fills the ActiveDuration and energy of the backend's
//! observation of the same holder, month by month.
//!
//! The agents' JSON documents (`/v1/state`, format version 1; see the agent's `render` module)
//! carry per holder and place (a GPU, a MIG instance, a vGPU) the held, idle and energy counters
//! of each calendar month. A holder's months are summed over its places. An observation is matched
//! to a holder by its resource ([`holders_of`]): a job's `<cluster>:<jobid>` to the Slurm job id
//! after the last `:` and to its own job id where that differs (an array task, a heterogeneous
//! component), a pod's `<cluster>/<namespace>/<uid>` to the pod UID after the last `/`, a VM's
//! UUID to the VM (libvirt domain UUID = Nova server id).
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

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use accelfed_schemas::usage::{Observation, RecordType};

use super::split::split_months;

/// The agent document format this meter reads.
const FORMAT_VERSION: u64 = 1;

/// One holder's counters per place (GPU, MIG or vGPU UUID) and month (`2026-01`).
#[derive(Debug, Clone, Default, PartialEq)]
struct Holding {
    places: BTreeMap<String, BTreeMap<String, MonthCounters>>,
}

impl Holding {
    /// The months summed over the places.
    fn months(&self) -> BTreeMap<&str, MonthCounters> {
        let mut months: BTreeMap<&str, MonthCounters> = BTreeMap::new();
        for counters in self.places.values() {
            for (month, place) in counters {
                let sum = months.entry(month.as_str()).or_default();
                sum.held_seconds += place.held_seconds;
                sum.idle_seconds += place.idle_seconds;
                sum.energy_joules += place.energy_joules;
            }
        }
        months
    }
}

/// The counters an agent gave for one holder, place and month.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub struct MonthCounters {
    pub held_seconds: f64,
    pub idle_seconds: f64,
    pub energy_joules: f64,
}

/// One row of what the agents measured: a holder (`kind`, `id`) on one place in one month. The
/// spool keeps the last of these the meter used (`spool/agent_figures.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFigure {
    pub kind: String,
    pub id: String,
    pub place: String,
    pub month: String,
    pub counters: MonthCounters,
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
            for (month, counters) in &holder.months {
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
            }
            let holding = self.holders.entry((holder.kind, holder.id)).or_default();
            holding.places.entry(holder.place).or_insert(holder.months);
        }
        Ok(count)
    }

    /// Adds one figure (one remembered by the spool), replacing one of the same holder, place and
    /// month.
    pub fn add_figure(&mut self, figure: AgentFigure) {
        self.holders
            .entry((figure.kind, figure.id))
            .or_default()
            .places
            .entry(figure.place)
            .or_default()
            .insert(figure.month, figure.counters);
    }

    /// Every holder, place and month the documents gave.
    pub fn figures(&self) -> impl Iterator<Item = AgentFigure> + '_ {
        self.holders.iter().flat_map(|((kind, id), holding)| {
            holding.places.iter().flat_map(move |(place, months)| {
                months.iter().map(move |(month, counters)| AgentFigure {
                    kind: kind.clone(),
                    id: id.clone(),
                    place: place.clone(),
                    month: month.clone(),
                    counters: *counters,
                })
            })
        })
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
            // The holder under every id it may be known by: an agent that reported the printed
            // id and one that reported the raw id hold different places of the same job.
            let mut holding = Holding::default();
            for key in holders_of(&observation) {
                if let Some(found) = self.holders.get(&key) {
                    for (place, months) in &found.places {
                        holding
                            .places
                            .entry(place.clone())
                            .or_insert_with(|| months.clone());
                    }
                }
            }
            if holding.places.values().any(|months| !months.is_empty()) {
                matched += 1;
                out.extend(per_month(&observation, &holding, now));
            } else {
                out.push(observation);
            }
        }
        (out, matched)
    }
}

/// The agent holders (kind, id) an observation may stand for (see the module documentation):
/// also how `accelfed idle --config` finds the VO and user of an idle holder. A Slurm job is
/// known to its node's agent by the id its cgroup names, `job_<JobIDRaw>`: for an array task
/// (`1230_4`) or a heterogeneous component (`1240+1`) that is its own job id
/// ([`Observation::agent_id`]), not the printed one; both are looked up. Without the raw id (a
/// manual usage line), a component `+0` is known by its leader's id, which is its own.
pub fn holders_of(observation: &Observation) -> Vec<(String, String)> {
    let resource = observation.resource.as_str();
    let after = |separator: char| resource.rsplit(separator).next().unwrap_or(resource);
    let key = |kind: &str, id: &str| (kind.to_owned(), id.to_owned());
    match observation.record_type {
        RecordType::Job => {
            let printed = after(':');
            let mut keys = vec![key("slurm_job", printed)];
            match (&observation.agent_id, printed.strip_suffix("+0")) {
                (Some(raw), _) if raw != printed => keys.push(key("slurm_job", raw)),
                (None, Some(leader)) => keys.push(key("slurm_job", leader)),
                _ => {}
            }
            keys
        }
        RecordType::Cloud if resource.contains('/') => vec![key("kubernetes_pod", after('/'))],
        RecordType::Cloud => vec![key("vm", resource)],
    }
}

/// The observation cut into its months, each with the agents' figures where they have the month.
fn per_month(observation: &Observation, holding: &Holding, now: DateTime<Utc>) -> Vec<Observation> {
    let pieces = split_months(observation.start, observation.end, now);
    let total_seconds: u64 = pieces.iter().map(|piece| piece.seconds).sum();
    let places = holding.places.len().max(1) as f64;
    let months = holding.months();
    pieces
        .into_iter()
        .map(|piece| {
            let mut month = observation.clone();
            month.start = piece.first_seen;
            month.end = Some(piece.last_seen);
            let seconds = piece.seconds as f64;
            match months.get(piece.month.to_string().as_str()) {
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

    /// Shaped as the recorded sacct data (`provider/tests/fixtures/slurm/v0.0.40/sacct.json`):
    /// array task 100_3 is job 104, heterogeneous components 105+0 and 105+1 are jobs 105 and 106;
    /// the node agents name them from their cgroups (`job_104`, `job_105`, `job_106`).
    #[test]
    fn array_tasks_and_het_components_match_by_either_id() {
        let month = json!({"held_seconds": 86_400.0, "idle_seconds": 43_200.0,
                           "energy_joules": 360_000.0});
        let holder = |id: &str, place: &str| json!({"kind": "slurm_job", "id": id, "place": place, "months": {"2026-02": month}});
        let document = json!({"format_version": 1, "holders": [
            holder("104", "GPU-a"), holder("105", "GPU-b"), holder("106", "GPU-c"),
            holder("107_2", "GPU-d"),
        ]});
        let mut agents = AgentUsage::default();
        agents
            .add_document(document.to_string().as_bytes())
            .unwrap();
        let with_raw = |printed: &str, raw: Option<&str>| {
            let mut observation = job(printed);
            observation.start = at(2, 1);
            observation.end = Some(at(2, 2));
            observation.agent_id = raw.map(str::to_owned);
            observation
        };
        let observations = vec![
            with_raw("gpucluster:100_3", Some("104")),
            with_raw("gpucluster:105+0", Some("105")),
            with_raw("gpucluster:105+1", Some("106")),
            // A manual line has no raw id: a `+0` component is its leader's job.
            with_raw("gpucluster:105+0", None),
            // An agent that names the printed id is matched too.
            with_raw("gpucluster:107_2", Some("109")),
            // The array's own id is some other task's: never matched without the raw id.
            with_raw("gpucluster:104_0", None),
        ];
        let (filled, matched) = agents.apply(observations, at(3, 1));
        assert_eq!(matched, 5);
        let figures: Vec<_> = filled
            .iter()
            .map(|o| (o.utilisation, o.energy_wh))
            .collect();
        let known = (Some(0.5), Some(100.0));
        assert_eq!(
            figures,
            [known, known, known, known, known, (Some(0.9), None)]
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
