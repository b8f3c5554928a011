//! Pure, deterministic renderings of a [`SiteSnapshot`](crate::glue::SiteSnapshot): the same snapshot
//! always gives the same bytes, so golden tests are stable and a BDII sees no spurious changes.

pub mod apel;
pub mod json;
pub mod ldif;
mod parallel;
pub mod xml;

use std::fmt;

use crate::glue::SiteSnapshot;
use std::str::FromStr;

/// The output formats of `accelfed provide`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// GLUE 2.1 JSON, class-keyed (the federation registry's and cloud-info-api's input).
    Glue21Json,
    /// LDIF with only the official GLUE 2.0 LDAP schema: loads into a stock BDII.
    LdifGlue20,
    /// LDIF with the GLUE 2.1 accelerator and cloud classes (needs accelfed's schema file).
    LdifGlue21,
    /// GLUE 2.0 XML (OGF rendering), for consumers that read GLUE2 as XML.
    Glue20Xml,
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::Glue21Json,
        Format::LdifGlue20,
        Format::LdifGlue21,
        Format::Glue20Xml,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Glue21Json => "glue21-json",
            Format::LdifGlue20 => "ldif-glue20",
            Format::LdifGlue21 => "ldif-glue21",
            Format::Glue20Xml => "glue20-xml",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|format| format.as_str() == s)
            .ok_or_else(|| format!("unknown format {s:?} (expected glue21-json, ldif-glue20, ldif-glue21 or glue20-xml)"))
    }
}

/// Renders `snapshot` in `format`.
pub fn render(snapshot: &SiteSnapshot, format: Format) -> Vec<u8> {
    match format {
        Format::Glue21Json => json::render(snapshot),
        Format::LdifGlue20 => ldif::render_glue20(snapshot),
        Format::LdifGlue21 => ldif::render_glue21(snapshot),
        Format::Glue20Xml => xml::render(snapshot),
    }
}
