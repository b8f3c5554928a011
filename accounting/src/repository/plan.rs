//! The pure part of ingest: given a checked record and the stored version of it (if any), decide
//! its outcome, what to write, and how the summaries change. Both backends feed every record
//! through the same [`Planner`], so they cannot disagree about replacement.
//!
//! The rule: a record the repository lacks adds its totals to its summary row; a record equal to
//! the stored one changes nothing; a changed record subtracts the stored version's totals from the
//! stored version's summary row (its VO may have changed) and adds the new version's totals to the
//! new one's. The backend applies the writes and the summary deltas in one transaction, so totals
//! never count a record twice or lose one.
//!
//! The same deltas keep two tables: `summaries` per (site, VO, model, month), which every report
//! but those by user reads, and the user rollup `user_summaries` per (site, VO, model, month,
//! user), which reports by user read. The planner keeps the finer deltas and sums them into the
//! coarser ones, so the two tables cannot disagree.

use std::collections::{BTreeMap, HashMap};

use super::row::RecordRow;
use super::totals::{SummaryKey, Totals, UserKey};
use crate::wire::Outcome;

/// What the backend must do with one record's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Insert it: the repository lacks it.
    Insert,
    /// Replace the stored row with it.
    Replace,
    /// Nothing: the stored row is identical.
    Keep,
}

/// Outcomes by batch position.
pub(crate) type Outcomes = Vec<(usize, Outcome)>;
/// Net change per row of each summary table (rows with no net change left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Deltas {
    /// Per (site, VO, model, month): `summaries`.
    pub summaries: Vec<(SummaryKey, Totals)>,
    /// Per (site, VO, model, month, user): `user_summaries`.
    pub users: Vec<(UserKey, Totals)>,
}

/// Accumulates outcomes and summary deltas over a batch.
#[derive(Debug, Default)]
pub(crate) struct Planner {
    deltas: BTreeMap<UserKey, Totals>,
    outcomes: Vec<(usize, Outcome)>,
}

impl Planner {
    /// A planner for a batch of `records`, its outcomes allocated once.
    pub fn with_capacity(records: usize) -> Self {
        Self {
            deltas: BTreeMap::new(),
            outcomes: Vec::with_capacity(records),
        }
    }

    /// Decides for the record at `position` of the batch, given its stored version.
    pub fn decide(
        &mut self,
        position: usize,
        row: &RecordRow,
        stored: Option<&RecordRow>,
    ) -> Action {
        let (action, outcome) = match stored {
            None => (Action::Insert, Outcome::Stored),
            Some(old) if old == row => return self.keep(position),
            Some(old) => {
                *self.deltas.entry(old.user_key()).or_default() -= old.totals();
                (Action::Replace, Outcome::Replaced)
            }
        };
        *self.deltas.entry(row.user_key()).or_default() += row.totals();
        self.outcomes.push((position, outcome));
        action
    }

    fn keep(&mut self, position: usize) -> Action {
        self.outcomes.push((position, Outcome::Unchanged));
        Action::Keep
    }

    /// The outcomes by batch position, and the net change per row of each summary table.
    pub fn finish(self) -> (Outcomes, Deltas) {
        let mut summaries: BTreeMap<SummaryKey, Totals> = BTreeMap::new();
        for (key, totals) in &self.deltas {
            *summaries.entry(key.summary.clone()).or_default() += *totals;
        }
        let deltas = Deltas {
            summaries: summaries
                .into_iter()
                .filter(|(_, t)| !t.is_zero())
                .collect(),
            users: self
                .deltas
                .into_iter()
                .filter(|(_, t)| !t.is_zero())
                .collect(),
        };
        (self.outcomes, deltas)
    }
}

/// A whole batch planned at once, for backends that look up every stored version first.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Rows that replace stored ones: delete these ids, then insert them.
    pub replaced: Vec<RecordRow>,
    /// Rows the repository lacks.
    pub inserts: Vec<RecordRow>,
    pub deltas: Deltas,
    pub outcomes: Vec<(usize, Outcome)>,
}

/// Plans `candidates` (position in the batch, row; unique ids) given the stored versions by id.
pub(crate) fn plan(
    candidates: Vec<(usize, RecordRow)>,
    stored: &HashMap<[u8; 32], RecordRow>,
) -> Plan {
    let mut planner = Planner::with_capacity(candidates.len());
    let mut plan = Plan::default();
    for (position, row) in candidates {
        match planner.decide(position, &row, stored.get(&row.record_id)) {
            Action::Insert => plan.inserts.push(row),
            Action::Replace => plan.replaced.push(row),
            Action::Keep => {}
        }
    }
    (plan.outcomes, plan.deltas) = planner.finish();
    plan
}

#[cfg(test)]
mod tests {
    use super::super::row::sample::row;
    use super::*;

    #[test]
    fn new_records_add_and_identical_ones_change_nothing() {
        let a = row(1, "atlas", 1000, 3600);
        let b = row(2, "atlas", 500, 3600);
        let stored = HashMap::from([(a.record_id, a.clone())]);
        let plan = plan(vec![(0, a), (1, b.clone())], &stored);
        assert_eq!(
            plan.outcomes,
            vec![(0, Outcome::Unchanged), (1, Outcome::Stored)]
        );
        assert_eq!(plan.inserts, vec![b.clone()]);
        assert!(plan.replaced.is_empty());
        assert_eq!(plan.deltas.summaries, vec![(b.summary_key(), b.totals())]);
        assert_eq!(plan.deltas.users, vec![(b.user_key(), b.totals())]);
    }

    #[test]
    fn a_changed_record_moves_its_totals() {
        let old = row(1, "atlas", 1000, 3600);
        let mut new = old.clone();
        new.vo = Some("cms".into());
        new.available_seconds = 7200;
        let stored = HashMap::from([(old.record_id, old.clone())]);
        let plan = plan(vec![(3, new.clone())], &stored);
        assert_eq!(plan.outcomes, vec![(3, Outcome::Replaced)]);
        assert_eq!(plan.replaced, vec![new.clone()]);
        let mut minus = Totals::default();
        minus -= old.totals();
        assert_eq!(
            plan.deltas.summaries,
            vec![
                (old.summary_key(), minus),
                (new.summary_key(), new.totals())
            ]
        );
        assert_eq!(
            plan.deltas.users,
            vec![(old.user_key(), minus), (new.user_key(), new.totals())]
        );
    }

    #[test]
    fn a_change_that_moves_no_numbers_leaves_summaries_alone() {
        let old = row(1, "atlas", 1000, 3600);
        let mut new = old.clone();
        new.fqan = Some("/atlas/Role=production".into());
        let plan = plan(vec![(0, new)], &HashMap::from([(old.record_id, old)]));
        assert_eq!(plan.outcomes, vec![(0, Outcome::Replaced)]);
        assert_eq!(plan.deltas, Deltas::default());
    }

    #[test]
    fn a_new_user_moves_the_user_rows_alone() {
        let old = row(1, "atlas", 1000, 3600);
        let mut new = old.clone();
        new.global_user_name = Some("/CN=someone".into());
        let plan = plan(
            vec![(0, new.clone())],
            &HashMap::from([(old.record_id, old.clone())]),
        );
        assert!(plan.deltas.summaries.is_empty());
        let mut minus = Totals::default();
        minus -= old.totals();
        let mut users = vec![(old.user_key(), minus), (new.user_key(), new.totals())];
        users.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(plan.deltas.users, users);
    }
}
