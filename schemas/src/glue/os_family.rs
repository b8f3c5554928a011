//! GLUE2's OSFamily (`OSFamily_t`): what an execution environment or a cloud instance type runs.
//!
//! The values are those GFD.147 (GLUE 2.0, appendix of enumerations) lists for `OSFamily_t`:
//! `linux`, `macosx`, `windows`, `solaris`. The enumeration is open, but a consumer matches the
//! listed values only, so a configuration that names another (`Linux`, `ubuntu`) is refused
//! rather than published where nothing would find it; case is forgiven and written lower case.

use serde::{Deserialize, Deserializer, Serialize};

/// One of GLUE2's OSFamily values, lower case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum OsFamily {
    Linux,
    MacOsX,
    Windows,
    Solaris,
}

/// Why a text is not an OSFamily.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a GLUE2 OSFamily (one of linux, macosx, windows, solaris)")]
pub struct OsFamilyError(pub String);

impl OsFamily {
    pub const ALL: [OsFamily; 4] = [Self::Linux, Self::MacOsX, Self::Windows, Self::Solaris];

    /// The value as GLUE2 writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::MacOsX => "macosx",
            Self::Windows => "windows",
            Self::Solaris => "solaris",
        }
    }

    /// Reads a value, in any case.
    pub fn parse(text: &str) -> Result<Self, OsFamilyError> {
        Self::ALL
            .into_iter()
            .find(|family| family.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| OsFamilyError(text.to_owned()))
    }
}

impl AsRef<str> for OsFamily {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<OsFamily> for &'static str {
    fn from(family: OsFamily) -> Self {
        family.as_str()
    }
}

impl std::fmt::Display for OsFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Refuses a value outside the list with [`OsFamilyError`]'s message, so a configuration file's
/// error points at the value's line and column.
impl<'de> Deserialize<'de> for OsFamily {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listed_values_read_in_any_case_and_others_are_refused() {
        assert_eq!(OsFamily::parse("linux"), Ok(OsFamily::Linux));
        assert_eq!(OsFamily::parse("Windows"), Ok(OsFamily::Windows));
        assert_eq!(
            OsFamily::parse("MACOSX").map(OsFamily::as_str),
            Ok("macosx")
        );
        assert_eq!(
            OsFamily::parse("ubuntu").unwrap_err().to_string(),
            "\"ubuntu\" is not a GLUE2 OSFamily (one of linux, macosx, windows, solaris)"
        );
        assert!(OsFamily::parse("").is_err());
    }
}
