//! Makes sure slapd, ldapadd and the GLUE 2.0 schema are there: installs the Debian packages on a
//! developer machine, fails with what to install under `CI=true` (a CI image must bring them).

use std::path::Path;
use std::process::Command;

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
    let output = Command::new("apt-get")
        .args([
            "-o",
            "DPkg::Lock::Timeout=300",
            "install",
            "-y",
            "-q",
            "slapd",
            "ldap-utils",
            "glue-schema",
        ])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output();
    let detail = match output {
        Ok(output) if output.status.success() => match missing() {
            None => return Ok(()),
            Some((_, still)) => format!("apt-get succeeded but {still} is still missing"),
        },
        Ok(output) => format!(
            "apt-get exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(err) => format!("could not run apt-get: {err}"),
    };
    Err(SlapdError::Install {
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
