//! Who may read what on the report API ([`crate::report_api`]): the [`Caller`] a request's
//! credential makes (none, a site's ingest token, an OIDC access token), and the rule
//! [`Access::allows`] applies to a report or a listing.
//!
//! * federation operator: everything;
//! * VO manager: their VOs' reports, down to each user;
//! * site administrator (the site's ingest token): their site's reports, users included, and its
//!   records;
//! * anonymous (and any signed-in person): VO- and site-level aggregates (no grouping by user),
//!   unless `[access] anonymous = false`.

pub mod config;
pub mod jwks;
pub mod oidc;
pub mod roles;

use std::sync::{Arc, RwLock};

use crate::auth::Tokens;
pub use config::AccessConfig;
pub use roles::Caller;

/// The credentials a request may carry, and the anonymous rule. A reload (SIGHUP) puts new rules
/// in force with [`Access::replace`]; a request in progress finishes under the rules it began with.
#[derive(Debug)]
pub struct Access {
    rules: RwLock<Arc<Rules>>,
}

#[derive(Debug)]
struct Rules {
    anonymous: bool,
    tokens: Arc<Tokens>,
    oidc: Option<oidc::Verifier>,
}

/// Why a request gets no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: a credential that failed (the reason is safe to show: it never holds the token).
    Unauthenticated(String),
    /// 401: no credential where one is needed.
    SignIn(String),
    /// 403: a valid credential asking beyond its role.
    Forbidden(String),
    /// 503: the OIDC provider's keys could not be read.
    Unavailable(String),
}

/// What a request asks to see.
#[derive(Debug, Clone, Default)]
pub struct Scope<'a> {
    pub vo: Option<&'a str>,
    pub site: Option<&'a str>,
    /// Per-record data (a site's record listing) rather than aggregates.
    pub records: bool,
    /// Figures per user (a report grouped by user): never anonymous.
    pub users: bool,
}

impl Access {
    pub fn new(anonymous: bool, tokens: Arc<Tokens>, oidc: Option<oidc::Verifier>) -> Self {
        Self {
            rules: RwLock::new(Arc::new(Rules {
                anonymous,
                tokens,
                oidc,
            })),
        }
    }

    /// Puts `other`'s rules (anonymous reading, tokens, OIDC provider and role table) in force.
    pub fn replace(&self, other: Access) {
        let rules = other.current();
        match self.rules.write() {
            Ok(mut current) => *current = rules,
            Err(poisoned) => *poisoned.into_inner() = rules,
        }
    }

    /// Whether anonymous readers may see VO- and site-level aggregates, under the rules in force.
    pub fn anonymous(&self) -> bool {
        self.current().anonymous
    }

    fn current(&self) -> Arc<Rules> {
        match self.rules.read() {
            Ok(rules) => rules.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The caller an `Authorization` header names. A bearer value is tried as a site token first
    /// (they are opaque, 256 random bits), then as an OIDC token when it has a JWT's shape.
    pub async fn identify(&self, authorization: Option<&str>) -> Result<Caller, Refusal> {
        let rules = self.current();
        let Some(value) = authorization else {
            return Ok(Caller::Anonymous);
        };
        let Some(token) = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
        else {
            return Err(Refusal::Unauthenticated(
                "Authorization must be `Bearer <token>`".to_owned(),
            ));
        };
        if let Some(site) = rules.tokens.site_for(token) {
            return Ok(Caller::Site(site));
        }
        let looks_like_jwt = token.split('.').count() == 3;
        match &rules.oidc {
            Some(verifier) if looks_like_jwt => match verifier.verify(token).await {
                Ok((subject, roles)) => {
                    tracing::debug!(subject = %subject, operator = roles.operator, vos = ?roles.vo_manager, "OIDC token accepted");
                    Ok(Caller::Person(roles))
                }
                Err(error) if error.is_unavailable() => {
                    tracing::error!("OIDC token not checked: {error}");
                    Err(Refusal::Unavailable(error.to_string()))
                }
                Err(error) => {
                    tracing::warn!("OIDC token refused: {error}");
                    Err(Refusal::Unauthenticated(error.to_string()))
                }
            },
            _ => Err(Refusal::Unauthenticated(
                "unknown bearer token (a site token, or an access token of the configured OIDC \
                 provider)"
                    .to_owned(),
            )),
        }
    }

    /// Whether `caller` may see `scope`.
    pub fn allows(&self, caller: &Caller, scope: &Scope<'_>) -> Result<(), Refusal> {
        if let Caller::Person(roles) = caller
            && roles.operator
        {
            return Ok(());
        }
        // VO- and site-level aggregates are everyone's while anonymous reading is on.
        if self.current().anonymous && !scope.records && !scope.users {
            return Ok(());
        }
        match caller {
            Caller::Anonymous => Err(Refusal::SignIn(if scope.records {
                "records are listed for their site: send its token".to_owned()
            } else if scope.users {
                "figures per user are for the VO's manager or the site: sign in".to_owned()
            } else {
                "anonymous reading is off ([access] anonymous = false): sign in".to_owned()
            })),
            Caller::Site(site) => match scope.site {
                Some(asked) if asked == site.as_str() => Ok(()),
                _ => Err(Refusal::Forbidden(format!(
                    "a site token reads its own site's data: add site={site}"
                ))),
            },
            Caller::Person(roles) if !scope.records => match scope.vo {
                Some(vo) if roles.vo_manager.contains(vo) => Ok(()),
                _ if roles.vo_manager.is_empty() => Err(Refusal::Forbidden(
                    "this token's entitlements give no role here".to_owned(),
                )),
                _ => Err(Refusal::Forbidden(format!(
                    "a VO manager reads their own VOs' data: add vo= one of {}",
                    roles
                        .vo_manager
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
            Caller::Person(_) => Err(Refusal::Forbidden(
                "records are listed for their site's token or the federation operator".to_owned(),
            )),
        }
    }
}
