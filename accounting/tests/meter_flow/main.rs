//! `accelfed meter`'s flow in-process ([`accelfed_accounting::flow::meter_site`]) with real
//! components: the providers' clients against the fake APIs and commands of the test kit, a real
//! spool in a temporary folder. `installed.rs`: the one pass's installed GPUs are the ones
//! `provide` publishes, per backend; `agents.rs`: the node agents' figures in the records;
//! `rules.rs`: what the flow does with what it read (held
//! records, a site that can meter nothing, failed backends).

#![allow(clippy::unwrap_used)]

mod agents;
mod installed;
mod rules;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use accelfed_accounting::config::AccountingConfig;
use accelfed_accounting::flow::{MeterPlan, MeterReport, meter_site};
use accelfed_provider::config::Config;

/// The site file `text` as `accelfed meter` loads it.
pub fn config(text: &str) -> Config {
    Config::parse(Path::new("site.toml"), text).unwrap()
}

pub fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().into()
}

/// One run of the flow over `[since, now)`, with the spool and the manual-usage file in `dir`.
pub async fn meter(
    dir: &Path,
    config: &Config,
    manual: Option<PathBuf>,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> MeterReport {
    let accounting: AccountingConfig =
        toml::from_str(&format!("spool = {:?}", dir.join("spool.sqlite"))).unwrap();
    let plan = MeterPlan {
        config,
        accounting: &accounting,
        manual,
        agents: None,
        spool: dir.join("spool.sqlite"),
        since,
        now,
    };
    meter_site(&plan).await
}
