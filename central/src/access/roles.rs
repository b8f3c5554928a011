//! Who a request is, and the roles `[[access.roles]]` gives a token's `eduperson_entitlement`
//! values (`urn:mace:egi.eu:group:<vo>:role=<role>#aai.egi.eu`, as EGI Check-in writes them).

use std::collections::BTreeSet;

use accelfed_schemas::names::SiteName;

use super::config::{RoleName, RoleRule};

/// The caller of one request, as its credential says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No credential.
    Anonymous,
    /// A site's ingest token: that site's reports and records.
    Site(SiteName),
    /// A person signed in at the OIDC provider, with the roles their entitlements give (none is
    /// possible: a valid token that grants nothing beyond what anonymous readers see).
    Person(Roles),
}

/// The roles of a signed-in person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles {
    pub operator: bool,
    /// The VOs this person manages.
    pub vo_manager: BTreeSet<String>,
}

impl Roles {
    /// The roles `rules` give `entitlements`.
    pub fn of(rules: &[RoleRule], entitlements: &[String]) -> Self {
        let mut roles = Self::default();
        for rule in rules {
            for entitlement in entitlements {
                let Some(vo) = matches(&rule.entitlement, entitlement) else {
                    continue;
                };
                match rule.role {
                    RoleName::Operator => roles.operator = true,
                    RoleName::VoManager => {
                        if let Some(vo) = vo.or_else(|| rule.vo.clone()) {
                            roles.vo_manager.insert(vo);
                        }
                    }
                }
            }
        }
        roles
    }
}

/// Whether `value` matches `pattern`: `Some(Some(vo))` where the pattern's `{vo}` stood for a VO
/// name, `Some(None)` for a pattern without `{vo}` that equals the value, `None` for no match.
/// A VO name is non-empty and holds no `:` or `#`, so `{vo}` cannot swallow a role or a suffix.
fn matches(pattern: &str, value: &str) -> Option<Option<String>> {
    let Some((before, after)) = pattern.split_once("{vo}") else {
        return (pattern == value).then_some(None);
    };
    let vo = value.strip_prefix(before)?.strip_suffix(after)?;
    let valid =
        !vo.is_empty() && !vo.contains([':', '#', '/']) && !vo.contains(char::is_whitespace);
    valid.then(|| Some(vo.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(entitlement: &str, role: RoleName, vo: Option<&str>) -> RoleRule {
        RoleRule {
            entitlement: entitlement.into(),
            role,
            vo: vo.map(str::to_owned),
        }
    }

    #[test]
    fn maps_egi_entitlements_to_roles() {
        let rules = [
            rule(
                "urn:mace:egi.eu:group:{vo}:role=manager#aai.egi.eu",
                RoleName::VoManager,
                None,
            ),
            rule(
                "urn:mace:egi.eu:group:ops.accelfed.eu:role=member#aai.egi.eu",
                RoleName::Operator,
                None,
            ),
            rule(
                "urn:mace:egi.eu:group:vo.example.org:admins:role=member#aai.egi.eu",
                RoleName::VoManager,
                Some("vo.example.org"),
            ),
        ];
        let roles = Roles::of(
            &rules,
            &[
                "urn:mace:egi.eu:group:atlas:role=manager#aai.egi.eu".into(),
                "urn:mace:egi.eu:group:cms:role=member#aai.egi.eu".into(),
                "urn:mace:egi.eu:group:vo.example.org:admins:role=member#aai.egi.eu".into(),
                // `{vo}` does not swallow a subgroup.
                "urn:mace:egi.eu:group:biomed:sub:role=manager#aai.egi.eu".into(),
            ],
        );
        assert!(!roles.operator);
        let vos: Vec<&str> = roles.vo_manager.iter().map(String::as_str).collect();
        assert_eq!(vos, ["atlas", "vo.example.org"]);
        let operator = Roles::of(
            &rules,
            &["urn:mace:egi.eu:group:ops.accelfed.eu:role=member#aai.egi.eu".into()],
        );
        assert!(operator.operator && operator.vo_manager.is_empty());
        assert_eq!(Roles::of(&rules, &[]), Roles::default());
    }
}
