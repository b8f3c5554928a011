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
//! * images -> ApplicationEnvironment (`Name` as `AppName`, `MarketPlaceURL` as `Repository`);
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

use super::ldif::other_info::{self, OtherInfo};
use super::ldif::{entry, gpu_info};
use layout::{Group, Layout, layout};
use writer::XmlWriter;

/// The GLUE 2.0 XML namespace (OGF GFD.147 rendering, release 1).
pub const NAMESPACE: &str = "http://schemas.ogf.org/glue/2009/03/spec_2.0_r1";

/// GLUE 2.0 XML of `snapshot`, indented by two spaces, ending with a newline.
pub fn render(snapshot: &SiteSnapshot) -> Vec<u8> {
    let entities = snapshot.entities();
    let tree = Tree::new(&entities);
    let stamp = Stamp {
        creation_time: entry::time(&snapshot.creation_time),
        validity: snapshot.validity_s.to_string(),
    };
    // A large site's document is ~1.1 KB an entity (the accelerators fold into their parents):
    // room for it saves copying the buffer as it grows.
    let mut writer = XmlWriter::with_capacity(entities.len() * 1_200);
    document(&mut writer, &tree, &stamp);
    let mut out = writer.finish();
    out.push(b'\n');
    out
}

/// What every entity element carries as XML attributes.
struct Stamp {
    creation_time: String,
    validity: String,
}

/// The entities with what the XML layout needs beyond the model: children in XML nesting (services
/// under the site), the GPU facts folded into each parent, and the share -> instance type links the
/// model keeps only on the instance type.
struct Tree<'a> {
    entities: &'a [Entity<'a>],
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    gpu_info: Vec<Vec<OtherInfo>>,
    links: Vec<Vec<(Class, &'a str)>>,
}

impl<'a> Tree<'a> {
    fn new(entities: &'a [Entity<'a>]) -> Self {
        let site = entities.iter().position(|e| e.class == Class::AdminDomain);
        let mut tree = Tree {
            entities,
            parent: vec![None; entities.len()],
            children: vec![Vec::new(); entities.len()],
            gpu_info: vec![Vec::new(); entities.len()],
            links: vec![Vec::new(); entities.len()],
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
                gpu_info::fold(entity, &mut tree.gpu_info[parent]);
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
        tree
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
        element(w, tree, site, stamp);
    }
    w.end(root);
}

/// Writes entity `index` and, inside it, its children.
fn element(w: &mut XmlWriter, tree: &Tree, index: usize, stamp: &Stamp) {
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
    let (own, associations) = leftovers(tree, index, &layout);
    // The folded GPU facts are many (seven accelerators of 16 facts on an environment): sort
    // references to them rather than copies.
    let mut other_info: Vec<&OtherInfo> = own.iter().chain(&tree.gpu_info[index]).collect();
    other_info::normalize(&mut other_info);
    for pair in other_info {
        w.text_element("OtherInfo", pair.as_str());
    }
    groups(w, tree, index, layout.first, stamp);
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
    groups(w, tree, index, layout.last, stamp);
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

/// The entity's own `OtherInfo` pairs (its own, attributes and associations the layout has no
/// element for; not sorted) and its `<Associations>` elements (in the layout's order).
fn leftovers<'t>(
    tree: &'t Tree,
    index: usize,
    layout: &Layout,
) -> (Vec<OtherInfo>, AssociationElements<'t>) {
    let entity = &tree.entities[index];
    let mut other: Vec<OtherInfo> = entity
        .other_info
        .iter()
        .map(|(key, value)| OtherInfo::new(key, value))
        .collect();
    for (name, value) in &entity.attributes {
        let field = layout.fields.iter().find(|f| f.source == Some(*name));
        let placed = match (field, value) {
            (_, Value::Count(count)) if !count.is_whole() => false,
            (Some(_), _) => true,
            (None, _) => *name == "Name",
        };
        if !placed {
            other.push(OtherInfo::from_value(&[name], value));
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
            None => other.push(OtherInfo::from_parts(&[class.name(), "ForeignKey"], target)),
        }
    }
    associations.sort_by_key(|(element, _)| {
        layout
            .associations
            .iter()
            .position(|(_, e)| e == element)
            .unwrap_or(usize::MAX)
    });

    (other, associations)
}

/// Writes the children of `index` that belong to `groups`, each group in its wrapper if it has one
/// (a wrapper with nothing in it is left out).
fn groups(w: &mut XmlWriter, tree: &Tree, index: usize, groups: &[Group], stamp: &Stamp) {
    for group in groups {
        let mut members = tree.children[index]
            .iter()
            .copied()
            .filter(|&child| group.classes.contains(&tree.entities[child].class))
            .peekable();
        if members.peek().is_none() {
            continue;
        }
        if let Some(wrapper) = group.wrapper {
            w.start(wrapper, &[]);
        }
        for child in members {
            element(w, tree, child, stamp);
        }
        if let Some(wrapper) = group.wrapper {
            w.end(wrapper);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glue::sample;

    fn rendered() -> String {
        String::from_utf8(render(&sample::snapshot("S"))).expect("UTF-8")
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
