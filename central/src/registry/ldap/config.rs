//! `[ldap]` in `central.toml`: the top-level slapd `accelfed serve` keeps in sync with the
//! federation view.
//!
//! ```toml
//! [ldap]
//! url = "ldap://127.0.0.1:2170"
//! bind_dn = "cn=admin,o=glue"
//! # ca = "/etc/grid-security/certificates"   # for ldaps://, besides the system's roots
//! password_file = "ldap.password"
//! base = "GLUE2GroupID=grid,o=glue"   # default
//! mode = "glue20"                     # default; "glue21" needs accelfed-glue21.schema on the server
//! interval_s = 300                    # also sync every 5 minutes; 0: only after pushes
//! ```

use std::path::PathBuf;

use serde::Deserialize;

use accelfed_schemas::render::ldif::LdifMode;

use accelfed_schemas::render::ldif::dn::rdns;

/// `[ldap]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LdapSyncConfig {
    /// The server: `ldap://host:port` or `ldaps://host:port` (a BDII listens on 2170).
    pub url: LdapUrl,
    /// A CA to trust besides the system's roots for an `ldaps://` server: a PEM file, or a folder
    /// of them such as `/etc/grid-security/certificates`. Relative paths are relative to the
    /// configuration file.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Who the sync binds as; it needs write access under `base`.
    pub bind_dn: String,
    /// A file holding the bind password (one line; a trailing newline is ignored). Relative paths
    /// are relative to the configuration file. The password never appears in logs.
    pub password_file: PathBuf,
    /// The entry the federation view hangs under, created by the sync: its first RDN must be
    /// `GLUE2GroupID=<name>`, its parent must exist (a BDII creates `o=glue`). Everything under it
    /// belongs to the sync: entries there that are not in the view are deleted.
    #[serde(default = "default_base")]
    pub base: GroupBase,
    /// `glue20` (default): only the official GLUE 2.0 schema's classes and attributes, which a
    /// stock top-BDII accepts; GPU facts go to `GLUE2EntityOtherInfo`. `glue21`: the accelerator
    /// and cloud classes, for a server that loads `schemas/ldap/accelfed-glue21.schema`.
    #[serde(default)]
    pub mode: ModeName,
    /// Seconds between syncs besides the one after each accepted push (repairs a server that was
    /// restarted or edited by hand). 0: only after pushes. Default 300.
    #[serde(default = "default_interval")]
    pub interval_s: u64,
}

fn default_base() -> GroupBase {
    GroupBase(DEFAULT_BASE.to_owned())
}

fn default_interval() -> u64 {
    300
}

/// The default base, as a top-level BDII has it.
pub const DEFAULT_BASE: &str = "GLUE2GroupID=grid,o=glue";

/// An `ldap://` or `ldaps://` URL.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct LdapUrl(String);

impl LdapUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for LdapUrl {
    type Error = String;
    fn try_from(url: String) -> Result<Self, String> {
        let rest = url
            .strip_prefix("ldap://")
            .or_else(|| url.strip_prefix("ldaps://"));
        match rest {
            Some(host) if !host.trim_end_matches('/').is_empty() => Ok(Self(url)),
            _ => Err(format!(
                "{url:?} is not an LDAP URL (expected ldap://host:port or ldaps://host:port)"
            )),
        }
    }
}

/// A base DN whose first RDN is `GLUE2GroupID=<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct GroupBase(String);

impl GroupBase {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for GroupBase {
    type Error = String;
    fn try_from(base: String) -> Result<Self, String> {
        let parts = rdns(&base);
        let first = parts
            .first()
            .and_then(|rdn| rdn.split_once('='))
            .filter(|(kind, value)| kind.eq_ignore_ascii_case("GLUE2GroupID") && !value.is_empty());
        if first.is_none() || parts.len() < 2 {
            return Err(format!(
                "{base:?}: the base must be GLUE2GroupID=<name>,<an existing entry>, e.g. {DEFAULT_BASE}"
            ));
        }
        Ok(Self(base))
    }
}

/// `mode`: which LDIF rendering the view uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeName {
    #[default]
    Glue20,
    Glue21,
}

impl From<ModeName> for LdifMode {
    fn from(mode: ModeName) -> Self {
        match mode {
            ModeName::Glue20 => LdifMode::Glue20,
            ModeName::Glue21 => LdifMode::Glue21,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LdapSyncConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn defaults_are_a_top_bdii_layout_in_glue20_mode() {
        let config = parse(
            "url = \"ldap://127.0.0.1:2170\"\nbind_dn = \"cn=admin,o=glue\"\npassword_file = \"pw\"\n",
        )
        .unwrap();
        assert_eq!(config.base.as_str(), DEFAULT_BASE);
        assert_eq!(config.mode, ModeName::Glue20);
        assert_eq!(LdifMode::from(config.mode), LdifMode::Glue20);
        assert_eq!(config.interval_s, 300);
    }

    #[test]
    fn bad_urls_bases_and_modes_are_refused_where_they_stand() {
        let err =
            parse("url = \"http://x\"\nbind_dn = \"a\"\npassword_file = \"pw\"\n").unwrap_err();
        assert!(err.to_string().contains("not an LDAP URL"), "{err}");
        assert!(err.to_string().contains("line 1"), "{err}");
        let err = parse(
            "url = \"ldap://x\"\nbind_dn = \"a\"\npassword_file = \"pw\"\nbase = \"o=glue\"\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("GLUE2GroupID=<name>"), "{err}");
        assert!(err.to_string().contains("line 4"), "{err}");
        let err = parse(
            "url = \"ldap://x\"\nbind_dn = \"a\"\npassword_file = \"pw\"\nmode = \"glue13\"\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("glue20"), "{err}");
        let err =
            parse("url = \"ldap://x\"\nbind_dn = \"a\"\npassword_file = \"pw\"\npasword = 1\n")
                .unwrap_err();
        assert!(err.to_string().contains("pasword"), "{err}");
    }
}
