//! `accelfed spool held` and `accelfed spool release`: the records the meter held back because
//! their usage exceeds the installed GPUs of their model and month. Data (the list) goes to
//! stdout, one record a line; what was done goes to the log.

use std::path::PathBuf;

use accelfed_accounting::spool::{Release, Spool};
use accelfed_schemas::usage::RecordId;

use crate::args::{SpoolAction, SpoolArgs};
use crate::exit::Outcome;

use super::accounting_site::{load_accounting, spool_path};

pub fn run(args: &SpoolArgs) -> Outcome {
    let path = match path(args) {
        Ok(path) => path,
        Err(outcome) => return outcome,
    };
    let mut spool = match Spool::open(&path) {
        Ok(spool) => spool,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Partial;
        }
    };
    match &args.action {
        SpoolAction::Held => list(&spool),
        SpoolAction::Release { ids, all } => {
            let which = if *all {
                Release::All
            } else {
                let mut parsed = Vec::new();
                for id in ids {
                    match RecordId::parse(id) {
                        Ok(id) => parsed.push(id),
                        Err(err) => {
                            tracing::error!("record id {id:?}: {err}");
                            return Outcome::Config;
                        }
                    }
                }
                Release::Ids(parsed)
            };
            release(&mut spool, &which)
        }
    }
}

/// The spool: `--spool`, else the site file's `accounting.spool`.
fn path(args: &SpoolArgs) -> Result<PathBuf, Outcome> {
    if let Some(path) = &args.spool.path {
        return Ok(path.clone());
    }
    let Some(config) = &args.config else {
        tracing::error!("no spool: give --config (the site file) or --spool");
        return Err(Outcome::Config);
    };
    let (_, accounting) = load_accounting(config)?;
    Ok(spool_path(config, &accounting))
}

fn list(spool: &Spool) -> Outcome {
    match spool.held() {
        Ok(held) => {
            for entry in &held {
                let record = &entry.record;
                println!(
                    "{}\t{}\t{}\t{:.3} GPU-hours\theld since {}\t{}",
                    record.id(),
                    record.month,
                    record.model,
                    record.gpu_seconds() / 3600.0,
                    entry.held_at,
                    entry.reason
                );
            }
            tracing::info!(held = held.len(), spool = %spool.path().display(), "held records listed");
            Outcome::Ok
        }
        Err(err) => {
            tracing::error!("{err}");
            Outcome::Partial
        }
    }
}

fn release(spool: &mut Spool, which: &Release) -> Outcome {
    match spool.release(which) {
        Ok(released) => {
            for id in &released.not_held {
                tracing::error!(record = %id, "not held in {}", spool.path().display());
            }
            tracing::info!(
                released = released.released,
                spool = %spool.path().display(),
                "released held records: the next ship sends them"
            );
            Outcome::finished(!released.not_held.is_empty())
        }
        Err(err) => {
            tracing::error!("{err}");
            Outcome::Partial
        }
    }
}
