//! Rounded shares that add up to their whole (issue #28, docs/architecture.md "Whole cards in
//! typed physical attributes").
//!
//! A fractional physical count is written to the thousandth. Rounded one by one, the MIG profiles
//! of one H100 (2/7 + 2/7 + 3/7) read 0.286 + 0.286 + 0.429 = 1.001 where the manager, its service
//! and the site say 1: a reader adding them up finds a second truth. So the parts of one whole are
//! rounded together, by largest remainder: each is cut down to its thousandth, and the thousandths
//! the cuts lost are given back one each to the parts that lost the most, until the parts add up
//! to the whole as it is written (0.286 + 0.286 + 0.428). No part moves by a thousandth or more,
//! so each still reads as its slots times its share to the thousandth.

use std::collections::BTreeMap;

use crate::glue::entity::{Entity, Value};
use crate::gpu::GpuCount;

/// One part of a whole: the entity (an index into the entity list), its GPU model and its exact
/// count.
pub(super) struct Part<'m> {
    pub index: usize,
    pub model: &'m str,
    pub exact: f64,
}

/// Rounds the `name` counts of `parts` (grouped by model: each model's parts are one whole)
/// so each group's written counts add up to its sum as written. A group holding a part below a
/// thousandth is left as it is: cutting it down would publish a GPU that is there as none.
pub(super) fn apportion(out: &mut [Entity<'_>], name: &'static str, parts: &[Part<'_>]) {
    // Whole GPUs, the common case (and 5,000 node types of a large site), round to themselves.
    if parts.iter().all(|part| is_whole(part.exact)) {
        return;
    }
    let mut groups: BTreeMap<&str, Vec<&Part>> = BTreeMap::new();
    for part in parts {
        groups.entry(part.model).or_default().push(part);
    }
    for parts in groups.into_values() {
        let Some(thousandths) =
            largest_remainder(&parts.iter().map(|p| p.exact).collect::<Vec<_>>())
        else {
            continue;
        };
        for (part, thousandths) in parts.iter().zip(thousandths) {
            if let Some(entity) = out.get_mut(part.index) {
                write(entity, name, thousandths);
            }
        }
    }
}

/// Whether `value` is a whole number, float noise aside (7 x 1/7 is 1).
fn is_whole(value: f64) -> bool {
    ((value * 1e6).round() / 1e6).fract() == 0.0
}

/// Each value in whole thousandths, adding up to the sum's thousandths; `None` where a value is
/// not a count (negative, not finite) or is a nonzero count below a thousandth.
fn largest_remainder(values: &[f64]) -> Option<Vec<u64>> {
    let mut floors = Vec::with_capacity(values.len());
    let mut remainders = Vec::with_capacity(values.len());
    let mut sum = 0.0;
    for &value in values {
        if !value.is_finite() || value < 0.0 || (value > 0.0 && value < 0.001) {
            return None;
        }
        sum += value;
        // Float noise off first (7 x 1/7 is 0.9999999999999998, a whole 1000 thousandths).
        let scaled = (value * 1000.0 * 1e6).round() / 1e6;
        let floor = scaled.floor();
        floors.push(floor as u64);
        remainders.push(scaled - floor);
    }
    // The whole as it is written: the sum rounded to thousandths, as `GpuCount` displays it.
    let whole = (sum * 1000.0).round() as u64;
    let floored: u64 = floors.iter().sum();
    let mut missing = whole.saturating_sub(floored);
    let mut order: Vec<usize> = (0..values.len()).collect();
    // Largest remainder first; ties in the parts' own order, so the result is deterministic.
    order.sort_by(|&a, &b| remainders[b].total_cmp(&remainders[a]).then(a.cmp(&b)));
    for index in order {
        if missing == 0 || remainders[index] <= 0.0 {
            break;
        }
        floors[index] += 1;
        missing -= 1;
    }
    Some(floors)
}

/// Writes `thousandths` as the entity's `name` count: a typed attribute when whole, else the
/// OtherInfo pair of that name (as `whole_physical_counts` places them).
fn write(entity: &mut Entity<'_>, name: &'static str, thousandths: u64) {
    let Ok(count) = GpuCount::new(thousandths as f64 / 1000.0) else {
        return;
    };
    let text = count.to_string();
    let typed = entity.attributes.iter().position(|(key, _)| *key == name);
    let listed = entity.other_info.iter().position(|(key, _)| key == name);
    match (text.parse::<u32>(), typed, listed) {
        // Already written so.
        (Ok(whole), Some(at), _) if matches!(entity.attributes[at].1, Value::Count(c) if c == GpuCount::whole(whole)) =>
            {}
        (Err(_), None, Some(at)) if entity.other_info[at].1 == text => {}
        (Ok(whole), _, _) => {
            if let Some(at) = listed {
                entity.other_info.remove(at);
            }
            match typed {
                Some(at) => entity.attributes[at].1 = Value::Count(GpuCount::whole(whole)),
                None => entity
                    .attributes
                    .push((name, Value::Count(GpuCount::whole(whole)))),
            }
        }
        (Err(_), _, _) => {
            if let Some(at) = typed {
                entity.attributes.remove(at);
            }
            match listed {
                Some(at) => entity.other_info[at].1 = text,
                None => {
                    entity.other_info.push((name.to_owned(), text));
                    entity.other_info.sort();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profiles_of_one_h100_add_up_to_one() {
        // 2/7 + 2/7 + 3/7: rounded alone 286 + 286 + 429 = 1001.
        let parts = largest_remainder(&[2.0 / 7.0, 2.0 / 7.0, 3.0 / 7.0]).unwrap();
        assert_eq!(parts, [286, 286, 428]);
        assert_eq!(parts.iter().sum::<u64>(), 1000);
    }

    #[test]
    fn whole_parts_stay_whole_and_a_partial_gpu_keeps_its_written_sum() {
        // Two cards whole, and two 3g.40gb slices (6/7 = 0.857 written).
        let parts = largest_remainder(&[2.0, 3.0 / 7.0, 3.0 / 7.0]).unwrap();
        assert_eq!(parts, [2000, 429, 428]);
        // Seven 1g.10gb slices in floating point are one card.
        let sevenths = largest_remainder(&[7.0 * (1.0 / 7.0), 0.25]).unwrap();
        assert_eq!(sevenths, [1000, 250]);
    }

    #[test]
    fn a_part_below_a_thousandth_or_not_a_count_leaves_the_group_alone() {
        assert_eq!(largest_remainder(&[0.0004, 0.5]), None);
        assert_eq!(largest_remainder(&[f64::NAN]), None);
        assert_eq!(largest_remainder(&[0.0, 0.5]), Some(vec![0, 500]));
    }
}
