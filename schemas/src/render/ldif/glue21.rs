//! GLUE 2.1 mode: the classes GLUE 2.0 has stay GLUE 2.0 entries ([`super::classes20`]); the
//! accelerator and cloud classes are entries of their own, with the classes and attributes of
//! `schemas/ldap/accelfed-glue21.schema` ([`super::schema21`]). Nothing is folded, so no GPU
//! OtherInfo keys: a fractional count is the only thing that goes to OtherInfo (`Number=0.5`).

use crate::glue::entity::{Class, Entity};

use super::Dit;
use super::classes20;
use super::mapping::{Mapping, Mappings, Stamp};
use super::schema21;
use super::tree::Plan;

/// The GLUE 2.1 mode mapping of every class.
pub fn mappings() -> Mappings {
    Mappings::new(mapping)
}

/// Where the entries of `entities` go in GLUE 2.1 mode (nothing is folded).
pub fn plan<'e>(
    entities: &'e [Entity<'e>],
    stamp: &'e Stamp,
    mappings: &'e Mappings,
    dit: Dit,
) -> Plan<'e> {
    Plan::new(entities, stamp, Vec::new(), mappings, dit)
}

fn mapping(class: Class) -> Option<Mapping> {
    classes20::mapping(class).or_else(|| schema21::def(class).map(schema21::ClassDef::mapping))
}
