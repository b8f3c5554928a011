//! `accelfed idle --config site.toml`: the site's allocations idle right now, from every node
//! agent's document in `[accounting.agents] documents`, each with what the site's backends know
//! of it (the VM, job or pod's VO, FQAN and user, from the same observations the meter reads, the
//! manual usage file's included):
//! one row per holder with its idle GPUs (or MIG / vGPU instances), since when and the GPU-hours
//! lost so far.

use std::collections::BTreeMap;
use std::path::Path;

use accelfed_accounting::flow::agents::{documents_in, read_document};
use accelfed_accounting::meter::{holders_of, read_manual};
use accelfed_agent::idle_list::idle_now;
use accelfed_schemas::usage::Observation;
use chrono::{Duration, Utc};
use serde::Serialize;
use serde_json::json;

use crate::args::agent::{IdleArgs, IdleFormat};
use crate::exit::Outcome;

use super::accounting_site::{load_accounting, resolve};

/// One holder idle now, over all its idle places.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct IdleHolding {
    kind: String,
    id: String,
    /// The backend's resource (VM UUID, `<cluster>:<jobid>`, `<cluster>/<ns>/<uid>`), where known.
    resource: Option<String>,
    vo: Option<String>,
    fqan: Option<String>,
    user: Option<String>,
    model: String,
    /// GPUs (or MIG / vGPU instances) of the holder idle now.
    gpus: usize,
    /// The earliest start of their current idle runs.
    idle_since_unix_ms: u64,
    /// Their idle hours summed.
    gpu_hours_lost: f64,
}

pub fn run(args: &IdleArgs, config_path: &Path) -> Outcome {
    let (config, accounting) = match load_accounting(config_path) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let Some(agents) = &accounting.agents else {
        tracing::error!(
            "{}: no [accounting.agents] documents folder to read the agents from",
            config_path.display()
        );
        return Outcome::Config;
    };
    let folder = resolve(config_path, &agents.documents);
    let paths = match documents_in(&folder) {
        Ok(paths) => paths,
        Err(problem) => {
            tracing::error!("{problem}");
            return Outcome::Partial;
        }
    };
    let mut complete = true;
    let mut holdings: BTreeMap<(String, String), IdleHolding> = BTreeMap::new();
    for path in paths {
        let idle = read_document(&path).and_then(|bytes| {
            let value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            idle_now(&value, 0.0)
        });
        let idle = match idle {
            Ok(idle) => idle,
            Err(problem) => {
                tracing::error!("{}: not used: {problem}", path.display());
                complete = false;
                continue;
            }
        };
        for place in idle {
            let holding = holdings
                .entry((place.kind.clone(), place.id.clone()))
                .or_insert_with(|| IdleHolding {
                    kind: place.kind.clone(),
                    id: place.id.clone(),
                    resource: None,
                    vo: None,
                    fqan: None,
                    user: None,
                    model: place.model.clone(),
                    gpus: 0,
                    idle_since_unix_ms: place.idle_since_unix_ms,
                    gpu_hours_lost: 0.0,
                });
            holding.gpus += 1;
            holding.idle_since_unix_ms = holding.idle_since_unix_ms.min(place.idle_since_unix_ms);
            holding.gpu_hours_lost += place.idle_hours;
        }
    }
    // What the backends say of the allocations that hold GPUs now.
    let now = Utc::now();
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    let observed = runtime.block_on(accelfed_provider::observe(
        &config,
        now - Duration::days(31),
        now,
    ));
    for failure in &observed.failures {
        tracing::error!(provider = %failure.provider, "allocations not read: {}", failure.message);
        complete = false;
    }
    let mut observations = observed.observations;
    if let Some(manual) = &accounting.observations {
        match read_manual(&resolve(config_path, manual), &config.site.name) {
            Ok(manual) => observations.extend(manual.observations),
            Err(error) => {
                tracing::error!("manual usage not read: {error}");
                complete = false;
            }
        }
    }
    for observation in observations.iter().filter(|o| o.end.is_none()) {
        for key in holders_of(observation) {
            if let Some(holding) = holdings.get_mut(&key) {
                describe(holding, observation);
            }
        }
    }
    let mut rows: Vec<IdleHolding> = holdings
        .into_values()
        .filter(|h| h.gpu_hours_lost / h.gpus.max(1) as f64 >= args.min_hours)
        .collect();
    rows.sort_by(|a, b| b.gpu_hours_lost.total_cmp(&a.gpu_hours_lost));
    let text = match args.format {
        IdleFormat::Json => {
            let lost: f64 = rows.iter().map(|r| r.gpu_hours_lost).sum();
            format!(
                "{}\n",
                json!({"min_hours": args.min_hours, "allocations": rows, "gpu_hours_lost": lost})
            )
        }
        IdleFormat::Table => table(&rows),
    };
    print!("{text}");
    if complete {
        Outcome::Ok
    } else {
        Outcome::Partial
    }
}

fn describe(holding: &mut IdleHolding, observation: &Observation) {
    holding.resource = Some(observation.resource.to_string());
    holding.vo = observation.vo.as_ref().map(ToString::to_string);
    holding.fqan = observation.fqan.as_ref().map(ToString::to_string);
    holding.user = observation.user.as_ref().map(ToString::to_string);
}

fn table(rows: &[IdleHolding]) -> String {
    let mut out = format!(
        "{:<15} {:<38} {:<20} {:<28} {:<24} {:>4} {:<20} {:>10}\n",
        "KIND", "ID", "VO", "USER", "MODEL", "GPUS", "IDLE SINCE (UTC)", "GPU-H LOST"
    );
    let dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".to_owned());
    for row in rows {
        let since = super::idle::idle_since_utc(row.idle_since_unix_ms);
        out.push_str(&format!(
            "{:<15} {:<38} {:<20} {:<28} {:<24} {:>4} {:<20} {:>10.2}\n",
            row.kind,
            row.id,
            dash(&row.vo),
            dash(&row.user),
            row.model,
            row.gpus,
            since,
            row.gpu_hours_lost
        ));
    }
    let lost: f64 = rows.iter().map(|r| r.gpu_hours_lost).sum();
    out.push_str(&format!(
        "{} allocation(s) idle; {lost:.2} GPU-hours (or MIG/vGPU instance-hours) lost so far\n",
        rows.len()
    ));
    out
}
