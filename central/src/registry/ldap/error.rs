//! What can go wrong talking to an LDAP server; every message names the server and the operation.

use std::path::PathBuf;

/// An LDAP failure of the sync or of a query.
#[derive(Debug, thiserror::Error)]
pub enum LdapError {
    #[error("LDAP server {url}: cannot connect: {source} (a retry may help)")]
    Connect {
        url: String,
        source: Box<ldap3::LdapError>,
    },
    #[error(
        "LDAP server {url}: bind as {dn:?} refused: {source} (check bind_dn and the password file)"
    )]
    Bind {
        url: String,
        dn: String,
        source: Box<ldap3::LdapError>,
    },
    #[error("LDAP server {url}: search {filter} under {base:?} failed: {source}")]
    Search {
        url: String,
        base: String,
        filter: String,
        source: Box<ldap3::LdapError>,
    },
    #[error("reading the LDAP password file {}: {source}", path.display())]
    PasswordFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the LDAP password file {} is empty", path.display())]
    EmptyPassword { path: PathBuf },
    /// `[ldap] ca` cannot be read or holds no certificate.
    #[error("{0}")]
    Ca(String),
}
