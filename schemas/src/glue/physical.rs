//! One physical count at every level of a document (issue #28): the physical GPUs a site, a
//! service, a manager, its execution environments and its shares publish must be one truth.
//!
//! The rules, per GPU model (docs/architecture.md "Physical GPU counts"):
//!
//! - an accelerator entity's physical counts are its slots times its `SlotShare`, and its used and
//!   free physical GPUs are not more than its total;
//! - a manager's `TotalPhysicalAccelerators:<model>` is the sum over its accelerator entities;
//! - a service's is its manager's; the site's (AdminDomain) is the sum over its managers; the
//!   cards a service says are installed (`physical_gpus:<model>`) are at least that;
//! - the execution environments of a batch manager hold, node count times `PhysicalAccelerators`
//!   (cards per node), at least the manager's total; and a node has no more cards than its
//!   shared slots need (`LogicalAccelerators` x `SlotShare`, rounded up: two 3g.40gb slices of
//!   3/7 are on 2 cards, seven 1g.10gb slices of 1/7 on 1, never 7);
//! - a share (a view of the manager's GPUs) never has more than the manager.
//!
//! Pure and over the entity list, so the same checker runs on a snapshot before it is rendered
//! ([`super::SiteSnapshot::validate`]) and on a document read back from JSON (the registry's push
//! checks). Read-back counts were rounded to thousandths, so sums get half a thousandth of slack
//! per term; a different truth (7 GPUs against 1) is far outside it.

use std::collections::BTreeMap;

use super::capacity::SITE_TOTAL_PREFIX;
use super::entity::{Class, Entity, Value};
use crate::excerpt::excerpt;
use crate::gpu::GpuCount;

/// Two entities of one document that publish different physical truths.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{first}: {first_count} {what}; {second}: {second_count} ({rule})")]
pub struct PhysicalMismatch {
    /// Class and ID of the entity whose count is checked.
    pub first: String,
    pub first_count: String,
    /// What is counted: `physical NVIDIA H100 80GB HBM3 GPUs`.
    pub what: String,
    /// Class and ID of the entity (or the entities) it must agree with.
    pub second: String,
    pub second_count: String,
    pub rule: &'static str,
}

/// Physical GPUs per model.
type Totals<'e> = BTreeMap<&'e str, Sum>;

/// Half a thousandth: what rounding a count to thousandths may change it by.
const ROUNDING: f64 = 0.0005;

/// A sum of published counts and how far their rounding may have taken it from the truth.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    value: f64,
    error: f64,
}

impl Sum {
    fn one(value: f64) -> Self {
        Self {
            value,
            error: ROUNDING,
        }
    }

    /// Adds `times` copies of one rounded count (nodes of a type times their count per node).
    fn add(&mut self, value: f64, times: f64) {
        self.value += value * times;
        self.error += ROUNDING * times;
    }

    fn merge(&mut self, other: Sum) {
        self.value += other.value;
        self.error += other.error;
    }

    /// Whether two sums can be one truth, rounded: both sides' rounding and a billionth for
    /// float sums. NaN (an unreadable count) never agrees.
    fn agrees(self, other: Sum) -> bool {
        (self.value - other.value).abs()
            <= self.error.max(ROUNDING) + other.error.max(ROUNDING) + 1e-9
    }

    /// Whether this part fits in `whole`, rounded.
    fn fits_in(self, whole: Sum) -> bool {
        self.value <= whole.value + self.error.max(ROUNDING) + whole.error.max(ROUNDING) + 1e-9
    }

    fn text(self) -> String {
        GpuCount::new(self.value).map_or_else(|_| self.value.to_string(), |c| c.to_string())
    }
}

/// Checks the physical counts of one document's entities (in tree order, as
/// [`super::SiteSnapshot::entities`] builds them and `from_json` reads them back).
pub fn check(entities: &[Entity<'_>]) -> Result<(), Box<PhysicalMismatch>> {
    let tree = Tree::new(entities);
    // Each accelerator against itself first: its own wrong count is the more precise refusal.
    for entity in entities.iter().filter(|e| is_accelerator(e.class)) {
        own::counts(entity)?;
    }
    let mut site_sum: Totals = BTreeMap::new();
    for (index, entity) in entities.iter().enumerate() {
        if !matches!(
            entity.class,
            Class::ComputingManager | Class::CloudComputingManager
        ) {
            continue;
        }
        let accelerators = sum_children(&tree, index, is_manager_accelerator);
        stated(
            entity,
            &accelerators,
            "its accelerator entities",
            "a manager's total is the sum over its accelerators",
        )?;
        if let Some(service) = entity.parent.and_then(|p| entities.get(p)) {
            stated(
                service,
                &accelerators,
                "its manager's accelerator entities",
                "a service's total is its manager's",
            )?;
            installed(service, &accelerators)?;
        }
        nodes::environments(&tree, index, &accelerators)?;
        shares(&tree, entity, &accelerators)?;
        for (model, sum) in accelerators {
            site_sum.entry(model).or_default().merge(sum);
        }
    }
    match entities.iter().find(|e| e.class == Class::AdminDomain) {
        Some(site) => stated(
            site,
            &site_sum,
            "the accelerators of its services' managers",
            "the site's total is the sum over its services",
        ),
        None => Ok(()),
    }
}

/// The entities with each one's children, found once: scanning the list for every manager,
/// share and node type would be quadratic on a site with thousands of them.
struct Tree<'d, 'a> {
    entities: &'d [Entity<'a>],
    children: Vec<Vec<usize>>,
}

impl<'d, 'a> Tree<'d, 'a> {
    fn new(entities: &'d [Entity<'a>]) -> Self {
        let mut children = vec![Vec::new(); entities.len()];
        for (index, entity) in entities.iter().enumerate() {
            if let Some(siblings) = entity.parent.and_then(|parent| children.get_mut(parent)) {
                siblings.push(index);
            }
        }
        Self { entities, children }
    }

    /// The children of `parent` whose class `keep` accepts, with their indexes.
    fn children(
        &self,
        parent: usize,
        keep: fn(Class) -> bool,
    ) -> impl Iterator<Item = (usize, &'d Entity<'a>)> + '_ {
        let entities = self.entities;
        self.children
            .get(parent)
            .into_iter()
            .flatten()
            .map(move |&index| (index, &entities[index]))
            .filter(move |(_, entity)| keep(entity.class))
    }
}

fn is_manager_accelerator(class: Class) -> bool {
    matches!(
        class,
        Class::ComputingManagerAccelerator | Class::CloudComputingManagerAccelerator
    )
}

fn is_accelerator(class: Class) -> bool {
    matches!(
        class,
        Class::ComputingManagerAccelerator
            | Class::CloudComputingManagerAccelerator
            | Class::ComputingShareAccelerator
            | Class::CloudComputingShareAccelerator
            | Class::AcceleratorEnvironment
            | Class::CloudComputingVirtualAccelerator
    )
}

fn named(entity: &Entity<'_>) -> String {
    format!("{} {}", entity.class.name(), entity.id)
}

fn what(model: &str) -> String {
    // A pushed document's model name is bounded by nothing: a refusal quotes an excerpt.
    format!("physical {} GPUs", excerpt(model))
}

/// A count: the typed attribute, or where the count is a fraction the OtherInfo pair of the same
/// name (docs/formats-json.md "Physical GPU counts").
fn number(entity: &Entity<'_>, name: &str) -> Option<f64> {
    match entity.attribute(name) {
        Some(Value::Count(count)) => return Some(count.get()),
        Some(Value::Int(n)) => return Some(*n as f64),
        Some(Value::Float(f)) => return Some(*f),
        _ => {}
    }
    entity
        .other_info
        .iter()
        .find(|(key, _)| key == name)
        .and_then(|(_, value)| value.parse::<GpuCount>().ok())
        .map(GpuCount::get)
}

/// `SlotShare` as a number (`3/7`); one where absent (whole GPUs).
fn slot_share(entity: &Entity<'_>) -> f64 {
    let Some(Value::Text(text)) = entity.attribute("SlotShare") else {
        return 1.0;
    };
    let parsed = text.split_once('/').and_then(|(n, d)| {
        let (n, d): (u32, u32) = (n.trim().parse().ok()?, d.trim().parse().ok()?);
        (d > 0).then(|| f64::from(n) / f64::from(d))
    });
    parsed.unwrap_or(1.0)
}

fn model<'e>(entity: &'e Entity<'_>) -> &'e str {
    match entity.attribute("Model") {
        Some(Value::Text(model)) => model,
        _ => "",
    }
}

/// The physical total of an accelerator entity: published, else its slots times their share.
fn physical_total(entity: &Entity<'_>) -> Option<f64> {
    number(entity, "TotalPhysicalAccelerators").or_else(|| {
        ["TotalAcceleratorSlots", "TotalAccelerators"]
            .iter()
            .find_map(|slots| number(entity, slots))
            .map(|slots| slots * slot_share(entity))
    })
}

/// Physical totals per model over the children of `parent` whose class `keep` accepts.
fn sum_children<'d>(tree: &Tree<'d, '_>, parent: usize, keep: fn(Class) -> bool) -> Totals<'d> {
    let mut totals: Totals = BTreeMap::new();
    for (_, child) in tree.children(parent, keep) {
        if let Some(total) = physical_total(child) {
            totals.entry(model(child)).or_default().add(total, 1.0);
        }
    }
    totals
}

/// The `TotalPhysicalAccelerators:<model>` pairs an entity states in its OtherInfo, against
/// `counted`. An entity that states none (a document from before they were published) is not
/// checked; one that states some must state every model, as zero counts as missing.
fn stated(
    entity: &Entity<'_>,
    counted: &Totals<'_>,
    counted_by: &str,
    rule: &'static str,
) -> Result<(), Box<PhysicalMismatch>> {
    let mut says: BTreeMap<&str, Sum> = BTreeMap::new();
    for (key, value) in &entity.other_info {
        if let Some(model) = key.strip_prefix(SITE_TOTAL_PREFIX) {
            let value = value.parse::<GpuCount>().map_or(f64::NAN, GpuCount::get);
            says.insert(model, Sum::one(value));
        }
    }
    if says.is_empty() {
        return Ok(());
    }
    let models = says.keys().chain(counted.keys());
    for model in models {
        let said = says.get(model).copied().unwrap_or_default();
        let sum = counted.get(model).copied().unwrap_or_default();
        if !said.agrees(sum) {
            return Err(Box::new(PhysicalMismatch {
                first: named(entity),
                first_count: said.text(),
                what: what(model),
                second: counted_by.to_owned(),
                second_count: sum.text(),
                rule,
            }));
        }
    }
    Ok(())
}

/// The key prefix of the GPUs installed per model a service may state (the Kubernetes provider
/// does, from the nodes' inventory): cards, where `TotalPhysicalAccelerators:` counts what the
/// slots are worth.
const INSTALLED_PREFIX: &str = "physical_gpus:";

/// A service's installed cards, where it states them, hold at least what its manager's slots
/// are worth: a GPU partitioned only in part (two `3g.40gb` slices, 6/7) is still one card.
fn installed(service: &Entity<'_>, counted: &Totals<'_>) -> Result<(), Box<PhysicalMismatch>> {
    for (key, value) in &service.other_info {
        let Some(model) = key.strip_prefix(INSTALLED_PREFIX) else {
            continue;
        };
        let cards = Sum::one(value.parse::<GpuCount>().map_or(f64::NAN, GpuCount::get));
        let worth = counted.get(model).copied().unwrap_or_default();
        if !worth.fits_in(cards) {
            return Err(Box::new(PhysicalMismatch {
                first: named(service),
                first_count: cards.text(),
                what: format!("{} installed ({key})", what(model)),
                second: "its manager's accelerator entities".to_owned(),
                second_count: worth.text(),
                rule: "the installed cards hold at least what the slots on them are worth",
            }));
        }
    }
    Ok(())
}

/// Each share of the manager's service against the manager: a view never has more GPUs.
fn shares(
    tree: &Tree<'_, '_>,
    manager: &Entity<'_>,
    accelerators: &Totals<'_>,
) -> Result<(), Box<PhysicalMismatch>> {
    let Some(service) = manager.parent else {
        return Ok(());
    };
    let is_share =
        |class: Class| matches!(class, Class::ComputingShare | Class::CloudComputingShare);
    for (index, share) in tree.children(service, is_share) {
        let view = sum_children(tree, index, |class| {
            matches!(
                class,
                Class::ComputingShareAccelerator | Class::CloudComputingShareAccelerator
            )
        });
        for (model, part) in view {
            let whole = accelerators.get(model).copied().unwrap_or_default();
            if !part.fits_in(whole) {
                return Err(Box::new(PhysicalMismatch {
                    first: named(share),
                    first_count: part.text(),
                    what: what(model),
                    second: named(manager),
                    second_count: whole.text(),
                    rule: "a share is a view of its manager's GPUs and never has more",
                }));
            }
        }
    }
    Ok(())
}

mod nodes;
mod own;
#[cfg(test)]
mod tests;
