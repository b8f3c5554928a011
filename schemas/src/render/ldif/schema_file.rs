//! The text of `schemas/ldap/accelfed-glue21.schema`, generated from [`super::schema21::CLASSES`] so
//! the file and the renderer cannot disagree.

use std::fmt::Write as _;

use super::schema21::{CLASSES, ClassDef, OID_ARC, Sup, Syntax, attribute_number, class_number};

const HEADER: &str = "\
# accelfed-glue21.schema: GLUE 2.1 accelerator and cloud classes for OpenLDAP.
#
# Generated from accelfed's schemas/src/render/ldif/schema21.rs; a test keeps this file equal to
# what that code writes, so edit the code, then run the schemas tests with UPDATE_GOLDEN=1.
#
# Load it next to the official GLUE 2.0 schema (Debian package glue-schema), after it:
#   include /etc/ldap/schema/GLUE20.schema
#   include /path/to/accelfed-glue21.schema
#
# OID arc: 2.25.36777110467375800468799450146777498746
#   = 2.25.<UUID 1bab038a-79ae-47d2-852b-4be5841e847a as one decimal integer>
#   (ITU-T X.667 / RFC 4122 UUID-based OID: anyone may mint one, no registration needed).
#   <arc>.1.<class>.<attribute>  attribute types
#   <arc>.2.<class>              object classes
#   Numbers are fixed in schema21.rs and never reused.
#
# Naming: GLUE2<Class><Attribute>, after the GLUE 2.1 attribute names; GLUE2<Class><Target>ForeignKey
# for associations; GLUE2<Class>ID for every class, the RDN of its entries: a cloud service's DN
# (GLUE2CloudComputingServiceID=...) differs from the GLUE2ServiceID=... DN the GLUE 2.0 mode gives
# it, so switching a BDII between the modes never asks slapd to change an entry's structural class.
# Classes that GLUE 2.0 has (ComputingService, ExecutionEnvironment, ...) are not redefined.
#
# Counts (GPUs, CPUs, memory in MB) are integers with ordering, so filters such as
# (GLUE2AcceleratorEnvironmentLogicalAccelerators>=4) work. A fractional GPU count (0.5) is not
# written to its integer attribute: the entry carries it as GLUE2EntityOtherInfo <Attribute>=0.5.
";

/// The schema file's text.
pub fn schema_file() -> String {
    let mut out = String::from(HEADER);
    for def in &CLASSES {
        let class_name = def.ldap_name();
        let _ = write!(out, "\n# {} ({})\n", def.class.name(), sup_name(def.sup));
        let mut may = Vec::new();
        let mut must = Vec::new();
        // Every class is keyed by an ID attribute of its own (see schema21::ClassDef::mapping).
        let id = def.attribute("ID");
        attribute_type(&mut out, def, "ID", &id, AttributeKind::Id);
        must.push(id);
        for (attribute, syntax) in def.attributes {
            let name = def.attribute(attribute);
            let kind = match syntax {
                Syntax::Text => AttributeKind::Text,
                Syntax::Integer => AttributeKind::Integer,
            };
            attribute_type(&mut out, def, attribute, &name, kind);
            may.push(name);
        }
        for (index, target) in def.foreign_keys.iter().enumerate() {
            let name = def.foreign_key(*target);
            let number = 100 + class_number(*target);
            let oid = format!("{OID_ARC}.1.{}.{number}", def.number);
            let _ = write!(
                out,
                "attributetype ( {oid}\n    NAME '{name}'\n    DESC 'ID of the {} this {} belongs to'\n    EQUALITY caseExactMatch\n    SUBSTR caseExactSubstringsMatch\n    SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n",
                target.name(),
                def.class.name(),
            );
            if index == 0 && def.sup == Sup::Entity {
                must.push(name);
            } else {
                may.push(name);
            }
        }
        let _ = write!(
            out,
            "objectclass ( {OID_ARC}.2.{}\n    NAME '{class_name}'\n    DESC 'GLUE 2.1 {}'\n    SUP {}\n    STRUCTURAL\n",
            def.number,
            def.class.name(),
            sup_name(def.sup),
        );
        for (keyword, list) in [("MUST", &must), ("MAY", &may)] {
            match list.len() {
                0 => {}
                1 => {
                    let _ = writeln!(out, "    {keyword} {}", list[0]);
                }
                _ => {
                    let _ = writeln!(out, "    {keyword} ( {} )", list.join(" $ "));
                }
            }
        }
        out.push_str("    )\n");
    }
    out
}

#[derive(Clone, Copy)]
enum AttributeKind {
    Id,
    Text,
    Integer,
}

fn attribute_type(out: &mut String, def: &ClassDef, suffix: &str, name: &str, kind: AttributeKind) {
    let oid = format!("{OID_ARC}.1.{}.{}", def.number, attribute_number(suffix));
    let rules = match kind {
        AttributeKind::Id => {
            "EQUALITY caseExactMatch\n    SUBSTR caseExactSubstringsMatch\n    SYNTAX 1.3.6.1.4.1.1466.115.121.1.15"
        }
        AttributeKind::Text => {
            "EQUALITY caseIgnoreMatch\n    SUBSTR caseIgnoreSubstringsMatch\n    SYNTAX 1.3.6.1.4.1.1466.115.121.1.15"
        }
        AttributeKind::Integer => {
            "EQUALITY integerMatch\n    ORDERING integerOrderingMatch\n    SYNTAX 1.3.6.1.4.1.1466.115.121.1.27"
        }
    };
    let _ = write!(
        out,
        "attributetype ( {oid}\n    NAME '{name}'\n    DESC 'GLUE 2.1 {}.{suffix}'\n    {rules}\n    SINGLE-VALUE )\n",
        def.class.name(),
    );
}

fn sup_name(sup: Sup) -> &'static str {
    match sup {
        Sup::Entity => "GLUE2Entity",
        Sup::Service => "GLUE2Service",
        Sup::Endpoint => "GLUE2Endpoint",
        Sup::Manager => "GLUE2Manager",
        Sup::Share => "GLUE2Share",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oids_are_unique_in_the_schema_file() {
        let text = schema_file();
        let mut oids: Vec<&str> = text
            .lines()
            .filter_map(|line| {
                line.strip_prefix("attributetype ( ")
                    .or_else(|| line.strip_prefix("objectclass ( "))
            })
            .collect();
        let count = oids.len();
        oids.sort_unstable();
        oids.dedup();
        assert_eq!(oids.len(), count);
        assert!(oids.iter().all(|oid| oid.starts_with(OID_ARC)));
    }

    #[test]
    fn counts_and_sizes_are_integers_with_ordering() {
        let text = schema_file();
        let block = text
            .split("attributetype")
            .find(|b| b.contains("'GLUE2AcceleratorEnvironmentLogicalAccelerators'"));
        let block = block.expect("attribute defined");
        assert!(block.contains("ORDERING integerOrderingMatch"), "{block}");
        assert!(block.contains("1.3.6.1.4.1.1466.115.121.1.27"), "{block}");
    }
}
