//! The last node agents' figures the meter used, per holder, place and month (`agent_figures`,
//! schema version 5). The meter rebuilds a month's records from scratch on every run, so a node
//! whose agent document is missing on a run (the node down, its copy not yet made) would take
//! its holders' ActiveDuration and energy out of records an earlier run had filled. The meter
//! therefore stores every figure the documents give here first ([`Spool::remember_agent_figures`])
//! and meters from what this table holds for the run's holders ([`Spool::agent_figures_of`]):
//! a place absent from this run's documents keeps its last figures.
//!
//! Monotonic: an agent's counters for a (holder, place, month) only grow, so a figure replaces
//! the stored one only when its held seconds are at least the stored ones. A smaller one is an
//! agent that lost its state file and counts again from zero; its figures stay below what was
//! measured before until they pass it, and then replace it (never summed: the same seconds
//! would be counted twice).

use rusqlite::{TransactionBehavior, params};

use crate::meter::{AgentFigure, MonthCounters};

use super::error::SpoolError;
use super::store::Spool;

impl Spool {
    /// Stores `figures` where they are new or grew (see the module documentation), in one
    /// transaction; returns how many rows changed.
    pub fn remember_agent_figures(
        &mut self,
        figures: impl IntoIterator<Item = AgentFigure>,
    ) -> Result<usize, SpoolError> {
        let path = self.path.clone();
        let err = |source| SpoolError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut changed = 0;
        {
            let mut upsert = tx
                .prepare_cached(
                    "INSERT INTO agent_figures
                         (kind, id, place, month, held_seconds, idle_seconds, energy_joules)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (kind, id, place, month) DO UPDATE SET
                         held_seconds = excluded.held_seconds,
                         idle_seconds = excluded.idle_seconds,
                         energy_joules = excluded.energy_joules
                     WHERE excluded.held_seconds >= agent_figures.held_seconds
                       AND (excluded.held_seconds, excluded.idle_seconds, excluded.energy_joules)
                           IS NOT (agent_figures.held_seconds, agent_figures.idle_seconds,
                                   agent_figures.energy_joules)",
                )
                .map_err(err)?;
            for figure in figures {
                let c = figure.counters;
                changed += upsert
                    .execute(params![
                        figure.kind,
                        figure.id,
                        figure.place,
                        figure.month,
                        c.held_seconds,
                        c.idle_seconds,
                        c.energy_joules
                    ])
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(changed)
    }

    /// Every stored figure of the holders `keys` names (kind, id).
    pub fn agent_figures_of<'a>(
        &self,
        keys: impl IntoIterator<Item = &'a (String, String)>,
    ) -> Result<Vec<AgentFigure>, SpoolError> {
        let mut select = self
            .conn
            .prepare_cached(
                "SELECT place, month, held_seconds, idle_seconds, energy_joules
                 FROM agent_figures WHERE kind = ?1 AND id = ?2",
            )
            .map_err(self.sqlite())?;
        let mut figures = Vec::new();
        for (kind, id) in keys {
            let rows = select
                .query_map(params![kind, id], |row| {
                    Ok(AgentFigure {
                        kind: kind.clone(),
                        id: id.clone(),
                        place: row.get(0)?,
                        month: row.get(1)?,
                        counters: MonthCounters {
                            held_seconds: row.get(2)?,
                            idle_seconds: row.get(3)?,
                            energy_joules: row.get(4)?,
                        },
                    })
                })
                .map_err(self.sqlite())?;
            for figure in rows {
                figures.push(figure.map_err(self.sqlite())?);
            }
        }
        Ok(figures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(place: &str, held: f64, idle: f64) -> AgentFigure {
        AgentFigure {
            kind: "slurm_job".into(),
            id: "42".into(),
            place: place.into(),
            month: "2026-02".into(),
            counters: MonthCounters {
                held_seconds: held,
                idle_seconds: idle,
                energy_joules: held * 100.0,
            },
        }
    }

    #[test]
    fn figures_are_kept_and_only_ever_grow() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool.sqlite");
        let mut spool = Spool::open(&path).unwrap();
        let key = ("slurm_job".to_owned(), "42".to_owned());
        assert_eq!(
            spool
                .remember_agent_figures([figure("GPU-a", 600.0, 60.0), figure("GPU-b", 600.0, 0.0)])
                .unwrap(),
            2
        );
        // GPU-b's node is down on the next run; GPU-a grew; a reset agent's smaller figure and
        // the same figure again change nothing.
        assert_eq!(
            spool
                .remember_agent_figures([figure("GPU-a", 900.0, 60.0)])
                .unwrap(),
            1
        );
        assert_eq!(
            spool
                .remember_agent_figures([figure("GPU-a", 30.0, 30.0), figure("GPU-a", 900.0, 60.0)])
                .unwrap(),
            0
        );
        drop(spool);
        let spool = Spool::open(&path).unwrap();
        let mut stored = spool.agent_figures_of([&key]).unwrap();
        stored.sort_by(|a, b| a.place.cmp(&b.place));
        assert_eq!(
            stored,
            [figure("GPU-a", 900.0, 60.0), figure("GPU-b", 600.0, 0.0)]
        );
        let other = ("vm".to_owned(), "42".to_owned());
        assert_eq!(spool.agent_figures_of([&other]).unwrap(), []);
    }
}
