//! Which records a run holds back: every record of a (site, model, month) whose GPU-hours exceed
//! the installed GPUs x the month's hours. Which of them is wrong the meter cannot tell (two
//! descriptions of one GPU, overlapping periods), so all of the group wait for an operator.

use accelfed_schemas::usage::UsageRecord;

use crate::meter::Overrun;
use crate::spool::Holds;

/// The records of `records` in an overrun's group, each with the finding in words.
pub fn doubted(records: &[UsageRecord], overruns: &[Overrun]) -> Holds {
    let mut holds = Holds::new();
    if overruns.is_empty() {
        return holds;
    }
    for record in records {
        let found = overruns.iter().find(|overrun| {
            overrun.site == record.site.as_str()
                && overrun.model == record.model.as_str()
                && overrun.month == record.month
        });
        if let Some(overrun) = found {
            holds.insert(
                record.id(),
                format!(
                    "usage above installed capacity: {} {} {:?}: {:.3} GPU-hours metered, at most {:.3} ({} GPUs installed)",
                    overrun.site,
                    overrun.month,
                    overrun.model,
                    overrun.used_gpu_hours,
                    overrun.bound_gpu_hours,
                    overrun.installed
                ),
            );
        }
    }
    holds
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::usage::sample::record;

    use super::*;
    use crate::meter::check_capacity;

    #[test]
    fn every_record_of_an_overrun_group_is_doubted_and_no_other() {
        let mut one = record("vm-1");
        let mut two = record("vm-2");
        // Twenty days each on the site's one A100: 40 GPU-days in a 31-day month.
        for r in [&mut one, &mut two] {
            r.installed = Some(accelfed_schemas::gpu::GpuCount::new(1.0).unwrap());
            r.available_duration = 20 * 86_400;
        }
        let mut other_month = record("vm-1");
        other_month.month = accelfed_schemas::usage::Month::new(2026, 2).unwrap();
        other_month.installed = one.installed;
        let records = vec![one.clone(), two.clone(), other_month.clone()];
        let overruns = check_capacity(&records);
        assert_eq!(overruns.len(), 1, "{overruns:?}");
        let holds = doubted(&records, &overruns);
        assert_eq!(holds.keys().cloned().collect::<Vec<_>>(), {
            let mut ids = vec![one.id(), two.id()];
            ids.sort();
            ids
        });
        assert!(holds[&one.id()].contains("at most 744.000"), "{holds:?}");
        assert!(doubted(&records, &[]).is_empty());
    }
}
