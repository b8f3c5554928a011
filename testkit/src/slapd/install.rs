//! Makes sure slapd, ldapadd and the GLUE 2.0 schema are there: installs the Debian packages on a
//! developer machine, fails with what to install under `CI=true` (a CI image must bring them).

use std::path::Path;

use super::{Result, SlapdError};

pub const SLAPD: &str = "/usr/sbin/slapd";
pub const LDAPADD: &str = "/usr/bin/ldapadd";
pub const GLUE20_SCHEMA: &str = "/etc/ldap/schema/GLUE20.schema";

const NEEDED: [(&str, &str); 3] = [
    ("slapd (Debian package slapd)", SLAPD),
    ("ldapadd (Debian package ldap-utils)", LDAPADD),
    ("GLUE20.schema (Debian package glue-schema)", GLUE20_SCHEMA),
];

/// Checks the tools, installing them once when allowed.
pub fn ensure_installed() -> Result<()> {
    let Some((what, path)) = missing() else {
        return Ok(());
    };
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        return Err(SlapdError::Missing {
            what,
            path: path.into(),
        });
    }
    crate::apt::install(&["slapd", "ldap-utils", "glue-schema"], || {
        missing().map(|(_, still)| still.to_owned())
    })
    .map_err(|detail| SlapdError::Install {
        what,
        path: path.into(),
        detail,
    })
}

fn missing() -> Option<(&'static str, &'static str)> {
    NEEDED
        .into_iter()
        .find(|(_, path)| !Path::new(path).exists())
}
