//! The configuration's reloads (SIGHUP): how many were put in force and how many refused, when the
//! configuration in force was loaded (the start counts), and whether the last try succeeded, so an
//! operator can alert on a refused reload that would otherwise wait, unnoticed, for the next
//! restart to fail the same way.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

/// The reload counters of this process.
#[derive(Debug, Default, Clone, Copy)]
pub struct Reloads {
    ok: u64,
    refused: u64,
    /// When the configuration in force was loaded; none before the service finished starting.
    in_force_since: Option<DateTime<Utc>>,
    last_failed: bool,
}

impl Reloads {
    /// The configuration was loaded at start.
    pub fn started(&mut self, at: DateTime<Utc>) {
        self.in_force_since = Some(at);
    }

    /// A reload was put in force (`true`) or refused.
    pub fn reloaded(&mut self, at: DateTime<Utc>, ok: bool) {
        if ok {
            self.ok += 1;
            self.in_force_since = Some(at);
        } else {
            self.refused += 1;
        }
        self.last_failed = !ok;
    }

    pub fn render(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP accelfed_config_reloads_total Reloads of central.toml on SIGHUP, by result (ok: put in force; refused: the old configuration kept).\n\
             # TYPE accelfed_config_reloads_total counter\n\
             accelfed_config_reloads_total{{result=\"ok\"}} {}\n\
             accelfed_config_reloads_total{{result=\"refused\"}} {}\n\
             # HELP accelfed_config_last_reload_successful 0 when the last reload was refused, else 1.\n\
             # TYPE accelfed_config_last_reload_successful gauge\n\
             accelfed_config_last_reload_successful {}",
            self.ok,
            self.refused,
            u8::from(!self.last_failed)
        );
        if let Some(at) = self.in_force_since {
            let _ = writeln!(
                out,
                "# HELP accelfed_config_last_reload_timestamp_seconds When the configuration in force was loaded (at start or by the last successful reload).\n\
                 # TYPE accelfed_config_last_reload_timestamp_seconds gauge\n\
                 accelfed_config_last_reload_timestamp_seconds {}",
                at.timestamp()
            );
        }
    }
}
