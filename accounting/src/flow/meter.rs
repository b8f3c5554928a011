//! `accelfed meter` as a library call: [`meter_site`] takes a [`MeterPlan`] and returns a
//! [`MeterReport`]; the binary logs the report and picks the exit status from it.
//!
//! The steps, in order: every backend's usage and installed GPUs in one pass over each listing
//! (`accelfed_provider::observe`); the manual-usage file; the monthly records, each told the
//! installed GPUs of its model, and the capacity check ([`crate::meter::meter`]); where the site
//! feeds APEL, the check of each record against what APEL's loader and database take; the
//! retractions the run implies; and one spool transaction that writes it all and holds back the
//! records the capacity check doubts ([`super::doubted`]), so they are never shipped unseen.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use accelfed_provider::config::Config;
use accelfed_provider::{ProviderFailure, Uncounted};
use accelfed_schemas::usage::{Observation, RecordId, Source, UsageRecord};

pub use super::agents::AgentsRead;
use crate::apel::safety::{self, Charset, Normalised, Refused};
use crate::config::AccountingConfig;
use crate::meter::{Capped, Installed, ManualError, MeterError, Overrun, meter, read_manual};
use crate::spool::{RunSummary, SpoolError};

/// What one meter run is to do, as the caller resolved it from the site file and its flags.
#[derive(Debug, Clone)]
pub struct MeterPlan<'a> {
    /// The site and its backends.
    pub config: &'a Config,
    /// `[accounting]` (its `apel` table says whether records are checked for APEL).
    pub accounting: &'a AccountingConfig,
    /// The manual-usage file, resolved against the site file's folder; `None` without one.
    pub manual: Option<PathBuf>,
    /// The folder of node agents' state documents, resolved likewise; `None` without agents.
    pub agents: Option<PathBuf>,
    /// The spool, resolved likewise.
    pub spool: PathBuf,
    /// The window: usage from `since` up to `now`.
    pub since: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// What the manual-usage file gave.
#[derive(Debug)]
pub enum ManualRead {
    Read {
        path: PathBuf,
        observations: usize,
        /// Lines not metered, each naming its line.
        refused: Vec<ManualError>,
    },
    /// The file could not be read at all.
    Unread(ManualError),
}

/// What reached the spool.
#[derive(Debug)]
pub struct Written {
    pub spool: PathBuf,
    /// Records written (retractions included), per source.
    pub by_source: BTreeMap<Source, usize>,
    pub summary: RunSummary,
}

/// What one meter run did.
#[derive(Debug)]
pub struct MeterReport {
    pub since: DateTime<Utc>,
    pub now: DateTime<Utc>,
    /// Backends configured that meter usage (static services do not).
    pub meters: usize,
    /// Observations from the backends and the manual-usage file.
    pub observed: usize,
    /// Backends that could not be read: nothing of theirs was written.
    pub failures: Vec<ProviderFailure>,
    /// Backends whose usage was read but not their installed GPUs (their models unbounded).
    pub uncounted: Vec<Uncounted>,
    /// `None` where the site has no manual-usage file.
    pub manual: Option<ManualRead>,
    /// `None` where the site names no agents' folder.
    pub agents: Option<AgentsRead>,
    /// Observations that gave no records.
    pub refused: Vec<MeterError>,
    /// Holdings whose periods overlapped past their month.
    pub capped: Vec<Capped>,
    /// (site, model, month)s above the installed GPUs; their records are held back.
    pub overruns: Vec<Overrun>,
    /// Values normalised for APEL, and records left out because APEL would refuse them.
    pub normalised: Vec<Normalised>,
    pub apel_refused: Vec<Refused>,
    /// Records retracted (sent again with no duration), or why they could not be worked out.
    pub retracted: Result<Vec<UsageRecord>, SpoolError>,
    /// The records held back, with why.
    pub held: BTreeMap<RecordId, String>,
    pub written: Result<Written, SpoolError>,
}

impl MeterReport {
    /// Nothing can be metered: no backend meters usage and there is no manual-usage file.
    pub fn nothing_to_meter(&self) -> bool {
        self.meters == 0 && self.manual.is_none()
    }

    /// Everything was read, metered and written with nothing to fix (exit status 0). Held records,
    /// refused lines and failed backends need an operator (exit status 1).
    pub fn complete(&self) -> bool {
        let manual_complete = match &self.manual {
            None => true,
            Some(ManualRead::Read { refused, .. }) => refused.is_empty(),
            Some(ManualRead::Unread(_)) => false,
        };
        let agents_complete = match &self.agents {
            None => true,
            Some(AgentsRead::Read { refused, .. }) => refused.is_empty(),
            Some(AgentsRead::Unread(_)) => false,
        };
        self.failures.is_empty()
            && manual_complete
            && agents_complete
            && self.refused.is_empty()
            && self.overruns.is_empty()
            && self.apel_refused.is_empty()
            && self.retracted.is_ok()
            && self.written.is_ok()
    }
}

/// Runs the meter as `plan` says; see the module documentation.
pub async fn meter_site(plan: &MeterPlan<'_>) -> MeterReport {
    let observed = accelfed_provider::observe(plan.config, plan.since, plan.now).await;
    let mut observations = observed.observations;
    let manual = plan
        .manual
        .as_ref()
        .map(|path| read_manual_file(path, plan, &mut observations));
    let agents = plan
        .agents
        .as_ref()
        .map(|folder| super::agents::fill(plan, folder, &mut observations));
    let mut installed = Installed::from_accelerators(&observed.installed);
    for uncounted in &observed.uncounted {
        for model in &uncounted.models {
            installed.unbounded(model);
        }
    }
    for (model, gpus) in installed.models() {
        match gpus {
            Some(gpus) => tracing::debug!(model, gpus, "installed GPUs"),
            None => tracing::debug!(model, "installed GPUs unknown: usage not bounded"),
        }
    }
    let metered = meter(&observations, plan.now, &installed);
    let holds = super::doubted(&metered.records, &metered.overruns);
    tracing::debug!(
        observations = observations.len(),
        records = metered.records.len(),
        refused = metered.refused.len(),
        overruns = metered.overruns.len(),
        held = holds.len(),
        "records built"
    );
    let (records, normalised, apel_refused) = match &plan.accounting.apel {
        Some(apel) => {
            let checked = safety::check(metered.records, Charset::from(apel.charset));
            (checked.records, checked.normalised, checked.refused)
        }
        None => (metered.records, Vec::new(), Vec::new()),
    };
    // A refused manual line may be the one that still stands behind a stored record: its hours
    // are kept (not retracted) until the line is fixed.
    let keep_manual =
        matches!(&manual, Some(ManualRead::Read { refused, .. }) if !refused.is_empty());
    let (retracted, written) =
        super::write::write(plan, records, &metered.resources, &holds, keep_manual);
    MeterReport {
        since: plan.since,
        now: plan.now,
        meters: observed.meters,
        observed: observations.len(),
        failures: observed.failures,
        uncounted: observed.uncounted,
        manual,
        agents,
        refused: metered.refused,
        capped: metered.capped,
        overruns: metered.overruns,
        normalised,
        apel_refused,
        retracted,
        held: if written.is_ok() {
            holds
        } else {
            BTreeMap::new()
        },
        written,
    }
}

/// Reads the manual-usage file into `observations`.
fn read_manual_file(
    path: &std::path::Path,
    plan: &MeterPlan<'_>,
    observations: &mut Vec<Observation>,
) -> ManualRead {
    match read_manual(path, &plan.config.site.name) {
        Ok(manual) => {
            let read = ManualRead::Read {
                path: path.to_owned(),
                observations: manual.observations.len(),
                refused: manual.refused,
            };
            observations.extend(manual.observations);
            read
        }
        Err(err) => ManualRead::Unread(err),
    }
}
