//! The nodes of a batch manager against its accelerators: cards per node
//! (`PhysicalAccelerators`) against the slots they carry, and the nodes' cards against the
//! manager's total (see the parent module for the rules).

use std::collections::BTreeMap;

use super::{PhysicalMismatch, Sum, Totals, Tree, model, named, number, slot_share, what};
use crate::glue::entity::{Class, Entity};

/// A batch manager's execution environments against the manager's accelerators: their nodes
/// hold at least the GPUs the accelerators count (more where a MIG layout leaves compute slices
/// no slot counts), and each node no more cards than its shared slots need. A manager without
/// environments that carry accelerators is not checked (such a layout says nothing per node).
pub(super) fn environments(
    tree: &Tree<'_, '_>,
    manager: usize,
    accelerators: &Totals<'_>,
) -> Result<(), Box<PhysicalMismatch>> {
    let mut cards: Totals = BTreeMap::new();
    let mut listed = Vec::new();
    let is_environment = |class: Class| class == Class::ExecutionEnvironment;
    for (index, ee) in tree.children(manager, is_environment) {
        let per_node = node_cards(tree, index, ee)?;
        let instances = number(ee, "TotalInstances").unwrap_or(0.0);
        for (model, count) in per_node {
            let total = cards.entry(model).or_default();
            total.value += count.value * instances;
            total.error += count.error * instances;
        }
        listed.push(ee.id.as_str());
    }
    if cards.is_empty() {
        return Ok(());
    }
    for (model, counted) in accelerators {
        let held = cards.get(model).copied().unwrap_or_default();
        if !counted.fits_in(held) {
            // A site may have thousands of node types: a refusal names a few.
            let more = listed.len().saturating_sub(3);
            let mut names = listed[..listed.len().min(3)].join(", ");
            if more > 0 {
                names.push_str(&format!(" and {more} more"));
            }
            return Err(Box::new(PhysicalMismatch {
                first: named(&tree.entities[manager]),
                first_count: counted.text(),
                what: what(model),
                second: format!(
                    "its execution environments {names} (nodes x PhysicalAccelerators)"
                ),
                second_count: held.text(),
                rule: "a manager's GPUs are on its nodes",
            }));
        }
    }
    Ok(())
}

/// Cards per node of one environment, per model, after checking them against what its shared
/// slots need.
fn node_cards<'d>(
    tree: &Tree<'d, '_>,
    index: usize,
    ee: &Entity<'_>,
) -> Result<Totals<'d>, Box<PhysicalMismatch>> {
    let mut cards: Totals = BTreeMap::new();
    // Per model: what the shared slots of a node need, in GPUs.
    let mut need: BTreeMap<&str, Sum> = BTreeMap::new();
    let is_accelerator = |class: Class| class == Class::AcceleratorEnvironment;
    for (_, accelerator) in tree.children(index, is_accelerator) {
        let model = model(accelerator);
        if let Some(physical) = number(accelerator, "PhysicalAccelerators") {
            cards.entry(model).or_default().add(physical, 1.0);
        }
        // Only a published share says what a logical device is (before `SlotShare`, a node
        // with more logical than physical devices was read as shared).
        if accelerator.attribute("SlotShare").is_some()
            && let Some(logical) = number(accelerator, "LogicalAccelerators")
        {
            need.entry(model)
                .or_default()
                .add(logical * slot_share(accelerator), 1.0);
        }
    }
    for (model, need) in need {
        let have = cards.get(model).copied().unwrap_or_default();
        let most = (need.value - need.error).ceil().max(need.value);
        if !need.fits_in(have) || have.value > most + have.error + 1e-9 {
            return Err(Box::new(PhysicalMismatch {
                first: named(ee),
                first_count: have.text(),
                what: format!("{} per node (PhysicalAccelerators)", what(model)),
                second: "its LogicalAccelerators x SlotShare".to_owned(),
                second_count: need.text(),
                rule: "a node holds the cards its slots need: no fewer, and no more than that \
                       rounded up",
            }));
        }
    }
    Ok(cards)
}
