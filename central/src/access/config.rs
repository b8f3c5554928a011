//! `[access]` in `central.toml`: who may read the report API. Anonymous readers see VO- and
//! site-level aggregates unless `anonymous = false`; sites read with their ingest tokens; people
//! sign in at an OIDC provider (EGI Check-in), whose access tokens carry `eduperson_entitlement`
//! values that `[[access.roles]]` maps to roles.

use std::path::PathBuf;

use serde::Deserialize;

use accelfed_net::url::HttpsUrl;

/// `[access]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessConfig {
    /// Whether a request without credentials reads VO- and site-level aggregates.
    #[serde(default = "yes")]
    pub anonymous: bool,
    /// The OIDC provider whose access tokens are accepted. Left out: no OIDC sign-in.
    #[serde(default)]
    pub oidc: Option<OidcConfig>,
    /// Entitlements to roles, tried in order; every match counts.
    #[serde(default)]
    pub roles: Vec<RoleRule>,
}

impl Default for AccessConfig {
    fn default() -> Self {
        Self {
            anonymous: true,
            oidc: None,
            roles: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// `[access.oidc]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The issuer, exactly as tokens name it in `iss` (EGI Check-in:
    /// `https://aai.egi.eu/auth/realms/egi`); its discovery document is
    /// `<issuer>/.well-known/openid-configuration`.
    pub issuer: HttpsUrl,
    /// The audience tokens must name in `aud` (the client id registered for this service).
    pub audience: String,
    /// The provider's keys from this file (a JWKS) instead of its discovery document.
    #[serde(default)]
    pub jwks_file: Option<PathBuf>,
    /// CA certificates (PEM) to trust for the provider besides the system's.
    #[serde(default)]
    pub ca: Option<PathBuf>,
}

/// `[[access.roles]]`: one entitlement pattern and the role it gives.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleRule {
    /// An `eduperson_entitlement` value; `{vo}` stands for a VO name and gives the role for that
    /// VO (`urn:mace:egi.eu:group:{vo}:role=manager#aai.egi.eu`).
    pub entitlement: String,
    pub role: RoleName,
    /// The VO of a `vo-manager` rule whose entitlement names no `{vo}`.
    #[serde(default)]
    pub vo: Option<String>,
}

/// The roles a rule may give (sites are identified by their tokens, not by entitlements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoleName {
    /// The federation operator: everything.
    Operator,
    /// A VO manager: their VOs' reports.
    VoManager,
}

impl AccessConfig {
    /// What `serve` refuses to start with: a rule that cannot give what it says.
    pub fn problem(&self) -> Option<String> {
        for (i, rule) in self.roles.iter().enumerate() {
            let placeholders = rule.entitlement.matches("{vo}").count();
            if placeholders > 1 {
                return Some(format!(
                    "access.roles[{i}]: entitlement names {{vo}} {placeholders} times; at most once"
                ));
            }
            match (rule.role, placeholders, &rule.vo) {
                (RoleName::VoManager, 0, None) => {
                    return Some(format!(
                        "access.roles[{i}]: a vo-manager rule needs {{vo}} in its entitlement or a vo"
                    ));
                }
                (RoleName::VoManager, 1, Some(_)) => {
                    return Some(format!(
                        "access.roles[{i}]: give either {{vo}} in the entitlement or vo, not both"
                    ));
                }
                (RoleName::Operator, 1, _) | (RoleName::Operator, _, Some(_)) => {
                    return Some(format!(
                        "access.roles[{i}]: an operator rule is for every VO: no {{vo}} and no vo"
                    ));
                }
                _ => {}
            }
        }
        if !self.roles.is_empty() && self.oidc.is_none() {
            return Some("[[access.roles]] map OIDC entitlements: add [access.oidc]".to_owned());
        }
        None
    }
}
