//! GLUE 2.0 XML (OGF rendering, namespace [`NAMESPACE`]), as ARC-style consumers read it:
//!
//! ```text
//! <Domains xmlns="http://schemas.ogf.org/glue/2009/03/spec_2.0_r1">
//!   <AdminDomain BaseType="Domain" CreationTime=".." Validity="..">
//!     <ID/> <Name/> <OtherInfo/>* <Description/> <WWW/> <Location/> <Contact/>*
//!     <Services>
//!       <ComputingService BaseType="Service">
//!         <ComputingEndpoint BaseType="Endpoint">  ... <AccessPolicy BaseType="Policy"/>
//!         <ComputingShare BaseType="Share">        <MappingPolicy BaseType="Policy"/>* ...
//!         <ComputingManager BaseType="Manager">
//!           <ExecutionEnvironments><ExecutionEnvironment BaseType="Resource"/>*</...>
//!           <ApplicationEnvironments><ApplicationEnvironment/>*</...>
//! ```
//!
//! Every entity element carries `CreationTime` and `Validity` attributes and starts with `ID`,
//! `Name` and its `OtherInfo` elements (`key=value`, sorted); children follow in the GLUE 2.0 XML
//! schema's order ([`layout`]); `<Associations>` holds `<ComputingShareID>`-style elements for links
//! that nesting does not already express (a child's link to its parent is its position).
//!
//! GLUE 2.0 has no cloud or accelerator classes, so the mapping is the one EGI used for clouds in
//! GLUE 2.0 (the same as the LDIF GLUE 2.0 mode):
//! * CloudComputingService -> ComputingService with `Type` `org.cloud.iaas`; its endpoint, shares
//!   and manager -> ComputingEndpoint, ComputingShare (`MaxVM`/`RunningVM` as
//!   `MaxRunningJobs`/`RunningJobs`, `ServingState` production) and ComputingManager (`TotalCPUs`
//!   as `TotalLogicalCPUs`);
//! * instance types (flavors) -> ExecutionEnvironment (`VirtualMachine` true, `CPU` as
//!   `LogicalCPUs`, `RAM` as `MainMemorySize`), linked both ways with their shares;
//! * images -> ApplicationEnvironment (`Name` as `AppName`, `MarketplaceURL` as `Repository`);
//! * accelerator entities (AcceleratorEnvironment, Computing/CloudComputing Manager and Share
//!   accelerators, CloudComputingVirtualAccelerator) -> `OtherInfo` on their parent element as
//!   `GPU.<lid>.ID=<id>` and `GPU.<lid>.<Attribute>=<value>`, the convention of
//!   [`super::ldif::gpu_info`], so a reader of either format splits keys the same way;
//! * any other attribute or association without a 2.0 element -> `OtherInfo` as
//!   `<Attribute>=<value>` or `<TargetClass>ForeignKey=<id>`. Nothing is dropped; fractional counts
//!   keep their fraction.
//!
//! `docs/formats-xml.md` is the reader's guide. The output is pure and deterministic: same snapshot,
//! same bytes. Text and attribute values are escaped as quick-xml escapes them (`&`, `<`, `>`, `'`,
//! `"`); non-ASCII stays UTF-8. [`writer`] lays the document out.

mod layout;
mod writer;

use std::collections::HashMap;

use crate::glue::SiteSnapshot;
use crate::glue::entity::{Class, Entity, Value};

use super::ldif::other_info::Pairs;
use super::ldif::{entry, gpu_info};
use super::parallel;
use layout::{Group, Layout, layout};
use writer::XmlWriter;

/// The GLUE 2.0 XML namespace (OGF GFD.147 rendering, release 1).
pub const NAMESPACE: &str = "http://schemas.ogf.org/glue/2009/03/spec_2.0_r1";

/// GLUE 2.0 XML of `snapshot`, indented by two spaces, ending with a newline.
pub fn render(snapshot: &SiteSnapshot) -> Vec<u8> {
    render_in(snapshot, None)
}

/// [`render`], long lists of elements cut into `parts` pieces rendered on threads of their own;
/// `None`: one piece per core, and only for lists long enough to gain from it.
fn render_in(snapshot: &SiteSnapshot, parts: Option<usize>) -> Vec<u8> {
    let entities = snapshot.entities();
    let tree = Tree::new(&entities, parts);
    let stamp = Stamp {
        creation_time: entry::time(&snapshot.creation_time),
        validity: snapshot.validity_s.to_string(),
    };
    // A large site's document is ~1.1 KB an entity (the accelerators fold into their parents):
    // room for it saves copying the buffer as it grows.
    let mut writer = XmlWriter::with_capacity(entities.len() * BYTES_PER_ENTITY);
    document(&mut writer, &tree, &stamp);
    let mut out = writer.finish();
    out.push(b'\n');
    out
}

/// Room for one entity's share of the document.
const BYTES_PER_ENTITY: usize = 1_200;

/// What every entity element carries as XML attributes.
struct Stamp {
    creation_time: String,
    validity: String,
}

/// The entities with what the XML layout needs beyond the model: children in XML nesting (services
/// under the site), the accelerators folded into each parent, and the share -> instance type links
/// the model keeps only on the instance type.
struct Tree<'a> {
    entities: &'a [Entity<'a>],
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    folded: Vec<Vec<usize>>,
    links: Vec<Vec<(Class, &'a str)>>,
    /// What writing each element costs, roughly: its own and its folded accelerators' attributes.
    weight: Vec<usize>,
    /// How many pieces long lists are cut into (`None`: see [`render_in`]).
    parts: Option<usize>,
}

impl<'a> Tree<'a> {
    fn new(entities: &'a [Entity<'a>], parts: Option<usize>) -> Self {
        let site = entities.iter().position(|e| e.class == Class::AdminDomain);
        let mut tree = Tree {
            entities,
            parent: vec![None; entities.len()],
            children: vec![Vec::new(); entities.len()],
            folded: vec![Vec::new(); entities.len()],
            links: vec![Vec::new(); entities.len()],
            weight: entities
                .iter()
                .map(|e| 4 + e.attributes.len() + e.associations.len())
                .collect(),
            parts,
        };
        let shares: HashMap<&str, usize> = entities
            .iter()
            .enumerate()
            .filter(|(_, e)| e.class == Class::CloudComputingShare)
            .map(|(index, e)| (e.id.as_str(), index))
            .collect();
        for (index, entity) in entities.iter().enumerate() {
            let parent = entity
                .parent
                .or(site.filter(|_| entity.class != Class::AdminDomain));
            tree.parent[index] = parent;
            let Some(parent) = parent else { continue };
            if gpu_info::is_accelerator(entity.class) {
                tree.folded[parent].push(index);
                tree.weight[parent] += 1 + entity.attributes.len();
            } else {
                tree.children[parent].push(index);
            }
            if entity.class == Class::CloudComputingInstanceType {
                for (class, target) in &entity.associations {
                    if *class == Class::CloudComputingShare
                        && let Some(&share) = shares.get(target.as_str())
                    {
                        tree.links[share].push((Class::CloudComputingInstanceType, &entity.id));
                    }
                }
            }
        }
        for folded in &mut tree.folded {
            folded.sort_by(|&a, &b| gpu_info::by_key_prefix(&entities[a], &entities[b]));
        }
        tree
    }

    /// `members` cut into pieces to render on threads of their own.
    fn split(&self, members: &[usize]) -> Vec<std::ops::Range<usize>> {
        let weights: Vec<usize> = members.iter().map(|&m| self.weight[m]).collect();
        match self.parts {
            Some(parts) => parallel::split_exactly(&weights, parts),
            None => parallel::split(&weights, parallel::parts()),
        }
    }
}

fn document(w: &mut XmlWriter, tree: &Tree, stamp: &Stamp) {
    w.declaration();
    let root = "Domains";
    w.start(root, &[("xmlns", NAMESPACE)]);
    if let Some(site) = tree
        .entities
        .iter()
        .position(|e| e.class == Class::AdminDomain)
    {
        element(w, tree, site, stamp, &mut Pairs::default());
    }
    w.end(root);
}

/// Writes entity `index` and, inside it, its children. `pairs` is room for `OtherInfo`, reused.
fn element(w: &mut XmlWriter, tree: &Tree, index: usize, stamp: &Stamp, pairs: &mut Pairs) {
    let entity = &tree.entities[index];
    let Some(layout) = layout(entity.class) else {
        return;
    };
    let times = [
        ("CreationTime", stamp.creation_time.as_str()),
        ("Validity", stamp.validity.as_str()),
    ];
    match layout.base_type {
        Some(base_type) => w.start(
            layout.element,
            &[("BaseType", base_type), times[0], times[1]],
        ),
        None => w.start(layout.element, &times),
    }

    w.text_element("ID", &entity.id);
    if let Some(Value::Text(name)) = entity.attribute("Name") {
        w.text_element("Name", name);
    }
    pairs.clear();
    // Folded facts first: they are many and come in order, and sorting is quickest when the few
    // others follow them rather than break their run.
    for &accelerator in &tree.folded[index] {
        gpu_info::fold(&tree.entities[accelerator], pairs);
    }
    let associations = leftovers(tree, index, &layout, pairs);
    pairs.normalize();
    for pair in pairs.iter() {
        w.text_element("OtherInfo", pair);
    }
    groups(w, tree, index, layout.first, stamp, pairs);
    for field in layout.fields {
        let value = field.source.and_then(|source| entity.attribute(source));
        match value {
            Some(Value::Count(count)) if !count.is_whole() => {}
            Some(value) => {
                for item in entry::texts(value) {
                    w.text_element(field.element, &item);
                }
            }
            None => {
                if let Some(default) = field.default {
                    w.text_element(field.element, default);
                }
            }
        }
    }
    groups(w, tree, index, layout.last, stamp, pairs);
    if !associations.is_empty() {
        w.start("Associations", &[]);
        for (element, target) in associations {
            w.text_element(element, target);
        }
        w.end("Associations");
    }
    w.end(layout.element);
}

/// `<Associations>` children: element name and target ID.
type AssociationElements<'t> = Vec<(&'static str, &'t str)>;

/// Adds the entity's own `OtherInfo` pairs to `other` (its own, attributes and associations the
/// layout has no element for; not sorted) and gives its `<Associations>` elements (in the layout's
/// order).
fn leftovers<'t>(
    tree: &'t Tree,
    index: usize,
    layout: &Layout,
    other: &mut Pairs,
) -> AssociationElements<'t> {
    let entity = &tree.entities[index];
    for (key, value) in &entity.other_info {
        other.push(key, value);
    }
    for (name, value) in &entity.attributes {
        let field = layout.fields.iter().find(|f| f.source == Some(*name));
        let placed = match (field, value) {
            (_, Value::Count(count)) if !count.is_whole() => false,
            (Some(_), _) => true,
            (None, _) => *name == "Name",
        };
        if !placed {
            other.push_value(&[name], value);
        }
    }

    let parent_id = tree.parent[index].map(|parent| tree.entities[parent].id.as_str());
    let links = entity
        .associations
        .iter()
        .map(|(class, target)| (*class, target.as_str()))
        .chain(tree.links[index].iter().copied());
    let mut associations = Vec::new();
    for (class, target) in links {
        if Some(target) == parent_id || gpu_info::is_accelerator(class) {
            // The parent is where the element sits; a folded accelerator's ID is in GPU.<lid>.ID.
            continue;
        }
        match layout.associations.iter().find(|(key, _)| *key == class) {
            Some((_, element)) => associations.push((*element, target)),
            None => other.push_parts(&[class.name(), "ForeignKey"], target),
        }
    }
    associations.sort_by_key(|(element, _)| {
        layout
            .associations
            .iter()
            .position(|(_, e)| e == element)
            .unwrap_or(usize::MAX)
    });

    associations
}

/// Writes the children of `index` that belong to `groups`, each group in its wrapper if it has one
/// (a wrapper with nothing in it is left out).
fn groups(
    w: &mut XmlWriter,
    tree: &Tree,
    index: usize,
    groups: &[Group],
    stamp: &Stamp,
    pairs: &mut Pairs,
) {
    for group in groups {
        let members: Vec<usize> = tree.children[index]
            .iter()
            .copied()
            .filter(|&child| group.classes.contains(&tree.entities[child].class))
            .collect();
        if members.is_empty() {
            continue;
        }
        if let Some(wrapper) = group.wrapper {
            w.start(wrapper, &[]);
        }
        let ranges = tree.split(&members);
        let depth = w.depth();
        let here = |range: std::ops::Range<usize>| {
            for &child in &members[range] {
                element(w, tree, child, stamp, pairs);
            }
        };
        // A large site's thousands of environments: the later pieces are written on threads of
        // their own, at the depth they sit at, and appended.
        let ((), pieces) = parallel::run_here(&ranges, here, |_, range| {
            let bytes = members[range.clone()]
                .iter()
                .map(|&m| tree.weight[m] * BYTES_PER_WEIGHT)
                .sum();
            let mut piece = XmlWriter::nested(depth, bytes);
            let mut pairs = Pairs::default();
            for &child in &members[range] {
                element(&mut piece, tree, child, stamp, &mut pairs);
            }
            piece.finish()
        });
        for piece in pieces {
            w.append(&piece);
        }
        if let Some(wrapper) = group.wrapper {
            w.end(wrapper);
        }
    }
}

/// Room for a piece of the document per unit of [`Tree::weight`].
const BYTES_PER_WEIGHT: usize = 48;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glue::sample;

    fn rendered() -> String {
        String::from_utf8(render(&sample::snapshot("S"))).expect("UTF-8")
    }

    #[test]
    fn pieces_rendered_apart_join_into_the_same_bytes() {
        let snapshot = sample::snapshot("S");
        let whole = render_in(&snapshot, Some(1));
        for parts in [2, 3, 7] {
            assert!(render_in(&snapshot, Some(parts)) == whole, "{parts} pieces");
        }
        assert!(render(&snapshot) == whole);
    }

    #[test]
    fn clouds_are_computing_services_with_the_iaas_type() {
        let xml = rendered();
        assert!(xml.contains("<Type>org.cloud.iaas</Type>"));
        assert!(xml.contains("<VirtualMachine>true</VirtualMachine>"));
        assert!(xml.contains("<AppName>Ubuntu 22.04 CUDA</AppName>"));
    }

    #[test]
    fn gpu_facts_are_folded_into_the_parent_other_info() {
        let xml = rendered();
        assert!(xml.contains("<OtherInfo>GPU.gpu.Model=NVIDIA A100-SXM4-80GB</OtherInfo>"));
        assert!(xml.contains("<OtherInfo>GPU.mig-3g.40gb.MIGProfile=3g.40gb</OtherInfo>"));
        assert!(xml.contains("<OtherInfo>GPU.g1.a100x2.Number=2</OtherInfo>"));
    }

    #[test]
    fn shares_and_flavors_link_both_ways() {
        let xml = rendered();
        assert!(xml.contains(
            "<ExecutionEnvironmentID>urn:accelfed:S:instance-type:cloud/g1.a100x2</ExecutionEnvironmentID>"
        ));
        assert!(
            xml.contains("<ComputingShareID>urn:accelfed:S:share:cloud/atlas</ComputingShareID>")
        );
    }
}
