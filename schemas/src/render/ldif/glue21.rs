//! GLUE 2.1 mode: the classes GLUE 2.0 has stay GLUE 2.0 entries ([`super::classes20`]); the
//! accelerator and cloud classes are entries of their own, with the classes and attributes of
//! `schemas/ldap/accelfed-glue21.schema` ([`super::schema21`]). Nothing is folded, so no GPU
//! OtherInfo keys: a fractional count is the only thing that goes to OtherInfo (`Number=0.5`).

use crate::glue::entity::Class;

use super::classes20;
use super::mapping::Mapping;
use super::schema21;

/// The GLUE 2.1 mode mapping of `class` (nothing is folded: see [`super::LdifMode::plan`]).
pub(super) fn mapping(class: Class) -> Option<Mapping> {
    classes20::mapping(class).or_else(|| schema21::def(class).map(schema21::ClassDef::mapping))
}
