//! The pure diff: what the server has, what it should have, and the LDAP operations between them.
//!
//! Entries are matched by DN ([`dn_key`]). An entry only the server has is deleted, one only the
//! view has is added, one both have is modified attribute by attribute (replace what differs,
//! remove what the view no longer has), and an entry that is the same on both sides costs nothing.
//! Order matters to the server: deletes come first, deepest entries first (a parent with children
//! cannot be deleted); then adds, shallowest first (a child needs its parent); then modifies.

use std::collections::{BTreeSet, HashMap};

use accelfed_schemas::render::ldif::dn::{depth, dn_key};

use super::entry::DirEntry;

/// One LDAP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LdapOp {
    Add(DirEntry),
    Modify { dn: String, changes: Vec<Change> },
    Delete { dn: String },
}

impl LdapOp {
    pub fn dn(&self) -> &str {
        match self {
            LdapOp::Add(entry) => &entry.dn,
            LdapOp::Modify { dn, .. } | LdapOp::Delete { dn } => dn,
        }
    }
}

/// One attribute change of a modify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The attribute gets exactly these values (added if the server had none).
    Replace {
        name: String,
        values: BTreeSet<String>,
    },
    /// The attribute goes.
    Remove { name: String },
}

/// How many requests of each kind a plan makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanCounts {
    pub adds: usize,
    pub modifies: usize,
    pub deletes: usize,
    /// Attribute changes across all modifies.
    pub changed_attributes: usize,
}

impl PlanCounts {
    pub fn of(ops: &[LdapOp]) -> Self {
        let mut counts = Self::default();
        for op in ops {
            match op {
                LdapOp::Add(_) => counts.adds += 1,
                LdapOp::Modify { changes, .. } => {
                    counts.modifies += 1;
                    counts.changed_attributes += changes.len();
                }
                LdapOp::Delete { .. } => counts.deletes += 1,
            }
        }
        counts
    }

    #[cfg(test)]
    pub fn total(&self) -> usize {
        self.adds + self.modifies + self.deletes
    }
}

/// The operations that turn `current` (the server's entries) into `desired`. A DN given twice in
/// `desired` counts once (the first).
pub fn plan(desired: &[DirEntry], current: &[DirEntry]) -> Vec<LdapOp> {
    let current_by_key: HashMap<String, &DirEntry> = current
        .iter()
        .map(|entry| (dn_key(&entry.dn), entry))
        .collect();
    let mut desired_keys = BTreeSet::new();
    let mut adds = Vec::new();
    let mut modifies = Vec::new();
    for entry in desired {
        let key = dn_key(&entry.dn);
        if !desired_keys.insert(key.clone()) {
            continue;
        }
        match current_by_key.get(&key) {
            None => adds.push(LdapOp::Add(entry.clone())),
            Some(have) => {
                let changes = changes(entry, have);
                if !changes.is_empty() {
                    modifies.push(LdapOp::Modify {
                        dn: have.dn.clone(),
                        changes,
                    });
                }
            }
        }
    }
    let mut deletes: Vec<&DirEntry> = current
        .iter()
        .filter(|entry| !desired_keys.contains(&dn_key(&entry.dn)))
        .collect();
    // Deepest first; among equals by DN, so the plan is the same whatever order the server
    // answered in.
    deletes.sort_by(|a, b| depth(&b.dn).cmp(&depth(&a.dn)).then(a.dn.cmp(&b.dn)));
    // Stable: among entries of one depth, the view's order (tree order) stays.
    adds.sort_by_key(|op| depth(op.dn()));

    let mut ops: Vec<LdapOp> = deletes
        .into_iter()
        .map(|entry| LdapOp::Delete {
            dn: entry.dn.clone(),
        })
        .collect();
    ops.extend(adds);
    ops.extend(modifies);
    ops
}

/// The attribute changes that make `have` into `want` (same DN).
fn changes(want: &DirEntry, have: &DirEntry) -> Vec<Change> {
    let mut out = Vec::new();
    for (key, attribute) in &want.attributes {
        if have.attributes.get(key).map(|a| &a.values) != Some(&attribute.values) {
            out.push(Change::Replace {
                name: attribute.name.clone(),
                values: attribute.values.clone(),
            });
        }
    }
    for (key, attribute) in &have.attributes {
        if !want.attributes.contains_key(key) {
            out.push(Change::Remove {
                name: attribute.name.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dn: &str, attrs: &[(&str, &str)]) -> DirEntry {
        let mut entry = DirEntry::new(dn);
        for (name, value) in attrs {
            entry.add(name, *value);
        }
        entry
    }

    fn tree() -> Vec<DirEntry> {
        vec![
            entry("g=grid,o=glue", &[("objectClass", "GLUE2Group")]),
            entry("d=A,g=grid,o=glue", &[("objectClass", "D"), ("n", "1")]),
            entry("s=1,d=A,g=grid,o=glue", &[("objectClass", "S"), ("v", "x")]),
            entry("e=1,s=1,d=A,g=grid,o=glue", &[("objectClass", "E")]),
        ]
    }

    #[test]
    fn the_same_entries_need_nothing() {
        assert!(plan(&tree(), &tree()).is_empty());
    }

    #[test]
    fn an_empty_server_gets_every_entry_parents_first() {
        let mut desired = tree();
        desired.reverse();
        let ops = plan(&desired, &[]);
        let dns: Vec<&str> = ops.iter().map(LdapOp::dn).collect();
        assert_eq!(
            dns,
            [
                "g=grid,o=glue",
                "d=A,g=grid,o=glue",
                "s=1,d=A,g=grid,o=glue",
                "e=1,s=1,d=A,g=grid,o=glue"
            ]
        );
        assert!(ops.iter().all(|op| matches!(op, LdapOp::Add(_))));
    }

    #[test]
    fn a_vanished_subtree_is_deleted_children_first() {
        let current = tree();
        let ops = plan(&current[..1], &current);
        let dns: Vec<&str> = ops.iter().map(LdapOp::dn).collect();
        assert_eq!(
            dns,
            [
                "e=1,s=1,d=A,g=grid,o=glue",
                "s=1,d=A,g=grid,o=glue",
                "d=A,g=grid,o=glue"
            ]
        );
        assert!(ops.iter().all(|op| matches!(op, LdapOp::Delete { .. })));
    }

    #[test]
    fn a_changed_entry_is_modified_attribute_by_attribute() {
        let current = tree();
        let mut desired = tree();
        desired[2] = entry(
            "s=1,d=A,g=grid,o=glue",
            &[("objectClass", "S"), ("v", "y"), ("w", "new")],
        );
        desired[1] = entry("d=A,g=grid,o=glue", &[("objectClass", "D")]);
        let ops = plan(&desired, &current);
        assert_eq!(
            ops,
            [
                LdapOp::Modify {
                    dn: "d=A,g=grid,o=glue".into(),
                    changes: vec![Change::Remove { name: "n".into() }],
                },
                LdapOp::Modify {
                    dn: "s=1,d=A,g=grid,o=glue".into(),
                    changes: vec![
                        Change::Replace {
                            name: "v".into(),
                            values: ["y".to_owned()].into(),
                        },
                        Change::Replace {
                            name: "w".into(),
                            values: ["new".to_owned()].into(),
                        },
                    ],
                },
            ]
        );
        assert_eq!(
            PlanCounts::of(&ops),
            PlanCounts {
                adds: 0,
                modifies: 2,
                deletes: 0,
                changed_attributes: 3
            }
        );
    }

    #[test]
    fn name_case_value_order_and_dn_escaping_are_not_changes() {
        let desired = vec![entry(
            "GLUE2DomainID=a\\,b,o=glue",
            &[("objectClass", "D"), ("Multi", "1"), ("Multi", "2")],
        )];
        let current = vec![entry(
            "glue2domainid=a\\2Cb,o=glue",
            &[("objectclass", "D"), ("multi", "2"), ("MULTI", "1")],
        )];
        assert!(plan(&desired, &current).is_empty());
    }

    #[test]
    fn value_case_is_a_change_because_glue2_matches_case_exactly() {
        let desired = vec![entry("d=A,o=glue", &[("n", "Site")])];
        let current = vec![entry("d=A,o=glue", &[("n", "site")])];
        assert_eq!(PlanCounts::of(&plan(&desired, &current)).modifies, 1);
    }

    #[test]
    fn deletes_come_before_adds_and_adds_before_modifies() {
        let current = vec![
            entry("d=Old,o=glue", &[("n", "1")]),
            entry("d=Keep,o=glue", &[("n", "1")]),
        ];
        let desired = vec![
            entry("d=Keep,o=glue", &[("n", "2")]),
            entry("d=New,o=glue", &[("n", "1")]),
        ];
        let kinds: Vec<&str> = plan(&desired, &current)
            .iter()
            .map(|op| match op {
                LdapOp::Add(_) => "add",
                LdapOp::Modify { .. } => "modify",
                LdapOp::Delete { .. } => "delete",
            })
            .collect();
        assert_eq!(kinds, ["delete", "add", "modify"]);
    }

    #[test]
    fn a_dn_given_twice_is_planned_once() {
        let desired = vec![
            entry("d=A,o=glue", &[("n", "1")]),
            entry("d=A,o=glue", &[("n", "2")]),
        ];
        assert_eq!(plan(&desired, &[]).len(), 1);
    }
}
