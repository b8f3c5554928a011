//! How one entity becomes one LDAP entry: which object classes, which attribute carries the ID,
//! where each GLUE 2.1 attribute and association goes.
//!
//! Both GLUE modes describe their classes with a [`Mapping`] and share [`Mapping::apply`], so the
//! rules that keep the output loadable and lossless live in one place:
//! * an attribute or association the mapping has no LDAP attribute for is not dropped: it goes into
//!   `GLUE2EntityOtherInfo` as `<Attribute>=<value>` (associations as `<Class>ForeignKey=<id>`);
//! * a fractional count (0.5 GPU) never goes into an LDAP attribute (they are integers): it goes into
//!   `GLUE2EntityOtherInfo` as `<Attribute>=0.5` instead, never rounded;
//! * a MUST attribute the model has no value for gets its documented placeholder ([`Mapping::placeholder`]).

use std::collections::HashSet;

use crate::glue::entity::{Class, Entity, Value};

use super::entry::{EntryOut, LdapEntry};
use super::gpu_info;
use super::other_info::Pairs;

/// The GLUE2 placeholder for an unknown integer that the schema requires (GLUE 2.0 profile).
pub const UNKNOWN_INT: &str = "999999999";
/// The GLUE2 placeholder for an unknown string that the schema requires.
pub const UNKNOWN_TEXT: &str = "UNDEFINEDVALUE";
/// GLUE2's ExtendedBoolean_t value for "not known".
pub const UNKNOWN_BOOL: &str = "undefined";

/// Where the parts of one entity class go.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mapping {
    pub object_classes: Vec<&'static str>,
    /// The attribute holding the entity's ID; also the RDN attribute of its DN.
    pub id: String,
    /// Further attributes that hold the ID (a GLUE 2.1 cloud service is keyed by
    /// `GLUE2CloudComputingServiceID` and carries `GLUE2ServiceID` too).
    pub id_copies: Vec<String>,
    /// GLUE 2.1 attribute name -> LDAP attribute; one attribute may go to several.
    pub attributes: Vec<(&'static str, String)>,
    /// Association target class -> LDAP attributes (empty: another entry carries the link).
    pub foreign_keys: Vec<(Class, Vec<String>)>,
    /// Values for MUST attributes the entity does not provide.
    pub defaults: Vec<(String, &'static str)>,
    /// Whether a foreign-key attribute is also the ID, a mapped attribute or a placeholder, so a
    /// foreign key's value may already be on the entry (kept up to date by the builder methods).
    fk_shadowed: bool,
}

/// What entries share: when the data was gathered and for how long it is valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub creation_time: String,
    pub validity: String,
}

/// Additions to an entity that its mode computes from other entities.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extra<'e> {
    /// Accelerators whose facts go into this entry's `OtherInfo` (GLUE 2.0 mode folds them).
    pub folded: Vec<&'e Entity<'e>>,
    /// Associations stored on this side in LDAP although the model keeps them on the other.
    pub associations: Vec<(Class, &'e str)>,
    /// Values its mode works out from other entities, written where the mapping would otherwise
    /// write a placeholder (LDAP attribute, value).
    pub values: Vec<(&'static str, &'static str)>,
}

/// The mapping of every class of one mode, made once per rendering rather than once per entity.
#[derive(Debug, Clone)]
pub struct Mappings(Vec<Option<Mapping>>);

impl Mappings {
    pub fn new(mapping: impl Fn(Class) -> Option<Mapping>) -> Self {
        Self(Class::ALL.into_iter().map(mapping).collect())
    }

    /// The mapping of `class`; `None` where the mode folds the class into its parent.
    pub fn get(&self, class: Class) -> Option<&Mapping> {
        self.0.get(class.index()).and_then(Option::as_ref)
    }
}

impl Mapping {
    pub fn new(object_classes: &[&'static str], id: impl Into<String>) -> Self {
        Self {
            object_classes: object_classes.to_vec(),
            id: id.into(),
            ..Self::default()
        }
    }

    /// Keys the entry by `rdn` instead, and keeps writing the ID to the former key attribute.
    pub fn keyed_by(mut self, rdn: impl Into<String>) -> Self {
        let former = std::mem::replace(&mut self.id, rdn.into());
        self.id_copies.push(former);
        self.shadowed()
    }

    pub fn attr(mut self, name: &'static str, ldap: impl Into<String>) -> Self {
        self.attributes.push((name, ldap.into()));
        self.shadowed()
    }

    /// Maps several attributes that share a prefix: `("GLUE2Endpoint", &["URL"])` maps `URL` to
    /// `GLUE2EndpointURL`.
    pub fn attrs(mut self, prefix: &str, names: &[&'static str]) -> Self {
        for name in names {
            self.attributes.push((name, format!("{prefix}{name}")));
        }
        self.shadowed()
    }

    pub fn fk(mut self, target: Class, ldap: &[&str]) -> Self {
        self.foreign_keys
            .push((target, ldap.iter().map(|name| (*name).to_owned()).collect()));
        self.shadowed()
    }

    pub fn placeholder(mut self, ldap: impl Into<String>, value: &'static str) -> Self {
        self.defaults.push((ldap.into(), value));
        self.shadowed()
    }

    /// Brings [`Mapping::fk_shadowed`] up to date.
    fn shadowed(mut self) -> Self {
        let id = std::iter::once(&self.id).chain(&self.id_copies);
        let attributes = self.attributes.iter().map(|(_, ldap)| ldap);
        let defaults = self.defaults.iter().map(|(ldap, _)| ldap);
        let mut others = id.chain(attributes).chain(defaults);
        self.fk_shadowed = self
            .foreign_keys
            .iter()
            .flat_map(|(_, names)| names)
            .any(|fk| others.any(|other| other == fk));
        self
    }

    /// Whether [`EntryOut::has_value`] is asked while applying this mapping (writers keep values
    /// only then).
    pub fn asks_values(&self) -> bool {
        self.fk_shadowed
    }

    /// The entry for `entity` at `dn`.
    pub fn apply<'a>(
        &'a self,
        entity: &'a Entity,
        dn: String,
        stamp: &'a Stamp,
        extra: &Extra<'a>,
    ) -> LdapEntry<'a> {
        let mut out = LdapEntry::new(dn, &self.object_classes);
        self.apply_to(entity, stamp, extra, &mut Pairs::default(), &mut out);
        out
    }

    /// Adds the attributes of `entity`'s entry to `out`, whose DN and object classes are written
    /// already. `pairs` is room for the `OtherInfo` pairs, reused from entry to entry.
    pub fn apply_to<'a>(
        &'a self,
        entity: &'a Entity,
        stamp: &'a Stamp,
        extra: &Extra<'a>,
        pairs: &mut Pairs,
        out: &mut impl EntryOut<'a>,
    ) {
        out.add_str(self.id.as_str(), entity.id.as_str());
        for copy in &self.id_copies {
            out.add_str(copy.as_str(), entity.id.as_str());
        }
        pairs.clear();
        // Folded facts first: they are many and come in order, and sorting is quickest when the
        // few others follow them rather than break their run.
        for accelerator in &extra.folded {
            gpu_info::fold(accelerator, pairs);
        }
        for (key, value) in &entity.other_info {
            pairs.push(key, value);
        }

        for (name, value) in &entity.attributes {
            let mut targets = self
                .attributes
                .iter()
                .filter(|(key, _)| key == name)
                .map(|(_, ldap)| ldap.as_str())
                .peekable();
            match value {
                _ if targets.peek().is_none() => pairs.push_value(&[name], value),
                Value::Count(count) if !count.is_whole() => pairs.push_value(&[name], value),
                _ => targets.for_each(|ldap| out.add_value(ldap, value)),
            }
        }
        for (ldap, value) in &extra.values {
            if !out.has(ldap) {
                out.add_str(ldap, value);
            }
        }
        for (ldap, value) in &self.defaults {
            if !out.has(ldap) {
                out.add_str(ldap.as_str(), value);
            }
        }

        // A value is written once per attribute, whichever association (or attribute) brings it.
        let mut written = Written::default();
        let associations = entity
            .associations
            .iter()
            .map(|(class, target)| (*class, target.as_str()))
            .chain(extra.associations.iter().copied());
        for (class, target) in associations {
            match self.foreign_keys.iter().find(|(key, _)| *key == class) {
                Some((_, attributes)) => {
                    for ldap in attributes {
                        // Only an ID, attribute or placeholder of the same name can be there
                        // before the foreign keys; `written` knows the foreign keys.
                        let earlier = self.fk_shadowed && out.has_value(ldap, target);
                        if !earlier && written.insert(ldap, target) {
                            out.add_str(ldap.as_str(), target);
                        }
                    }
                }
                None => pairs.push_parts(&[class.name(), "ForeignKey"], target),
            }
        }

        pairs.normalize();
        for pair in pairs.iter() {
            out.add_string("GLUE2EntityOtherInfo", pair);
        }
        out.add_str("GLUE2EntityCreationTime", stamp.creation_time.as_str());
        out.add_str("GLUE2EntityValidity", stamp.validity.as_str());
    }
}

/// The foreign-key values an entry has so far, as (attribute, value). Most entries have a handful
/// (a list is quickest); a share can link thousands of environments (a set keeps that linear).
#[derive(Debug, Default)]
struct Written<'a> {
    few: Vec<(&'a str, &'a str)>,
    many: HashSet<(&'a str, &'a str)>,
}

impl<'a> Written<'a> {
    const FEW: usize = 16;

    /// Records the value; `false` if it was there already.
    fn insert(&mut self, attribute: &'a str, value: &'a str) -> bool {
        let key = (attribute, value);
        if self.few.len() < Self::FEW {
            if self.few.contains(&key) {
                return false;
            }
            self.few.push(key);
            return true;
        }
        !self.few.contains(&key) && self.many.insert(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuCount;

    fn stamp() -> Stamp {
        Stamp {
            creation_time: "2026-01-01T00:00:00Z".into(),
            validity: "60".into(),
        }
    }

    fn entity(attributes: Vec<(&'static str, Value<'static>)>) -> Entity<'static> {
        Entity {
            class: Class::CloudComputingShare,
            id: "urn:x".into(),
            parent: None,
            attributes,
            other_info: vec![("z".into(), "1".into()), ("empty".into(), String::new())],
            associations: vec![
                (Class::CloudComputingService, "urn:svc".into()),
                (Class::UserDomain, "atlas".into()),
            ],
        }
    }

    #[test]
    fn unmapped_attributes_and_associations_go_to_other_info() {
        let mapping = Mapping::new(&["GLUE2Share"], "GLUE2ShareID")
            .attr("Name", "GLUE2EntityName")
            .fk(
                Class::CloudComputingService,
                &["GLUE2ShareServiceForeignKey"],
            );
        let e = entity(vec![
            ("Name", Value::Text("n".into())),
            ("ProjectID", Value::Text("p".into())),
        ]);
        let stamp = stamp();
        let out = mapping.apply(
            &e,
            "GLUE2ShareID=urn:x,o=glue".into(),
            &stamp,
            &Extra::default(),
        );
        assert_eq!(out.values("GLUE2ShareID").collect::<Vec<_>>(), ["urn:x"]);
        assert_eq!(out.values("GLUE2EntityName").collect::<Vec<_>>(), ["n"]);
        assert_eq!(
            out.values("GLUE2ShareServiceForeignKey")
                .collect::<Vec<_>>(),
            ["urn:svc"]
        );
        let other: Vec<_> = out.values("GLUE2EntityOtherInfo").collect();
        assert_eq!(other, ["ProjectID=p", "UserDomainForeignKey=atlas", "z=1"]);
    }

    #[test]
    fn fractional_counts_go_to_other_info_and_whole_ones_to_the_attribute() {
        let mapping = Mapping::new(&["X"], "XID")
            .attr("Number", "XNumber")
            .attr("Total", "XTotal");
        let half = GpuCount::new(0.5).expect("valid");
        let e = entity(vec![
            ("Number", Value::Count(half)),
            ("Total", Value::Count(GpuCount::whole(3))),
        ]);
        let stamp = stamp();
        let out = mapping.apply(&e, "XID=urn:x".into(), &stamp, &Extra::default());
        assert_eq!(out.values("XNumber").count(), 0);
        assert_eq!(out.values("XTotal").collect::<Vec<_>>(), ["3"]);
        assert!(
            out.values("GLUE2EntityOtherInfo")
                .any(|v| v == "Number=0.5")
        );
    }

    #[test]
    fn defaults_fill_only_missing_must_attributes() {
        let mapping = Mapping::new(&["X"], "XID")
            .attr("Name", "XName")
            .placeholder("XName", UNKNOWN_TEXT)
            .placeholder("XMemory", UNKNOWN_INT);
        let e = entity(vec![("Name", Value::Text("n".into()))]);
        let stamp = stamp();
        let out = mapping.apply(&e, "XID=urn:x".into(), &stamp, &Extra::default());
        assert_eq!(out.values("XName").collect::<Vec<_>>(), ["n"]);
        assert_eq!(out.values("XMemory").collect::<Vec<_>>(), [UNKNOWN_INT]);
    }
}
