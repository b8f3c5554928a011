//! Validated names. Every name that ends up in an identifier, a DN or a filter passes through here, so
//! the renderers can rely on "non-empty, no control characters" and only have to escape.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// The longest name accepted, in characters: APEL's columns hold 255, and an LDAP DN built from
/// names several times over must stay within what slapd indexes.
pub const MAX_NAME_CHARS: usize = 255;

/// Why a name was refused. A quoted value is at most an [`excerpt`] of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("{what} {value:?} is {chars} characters long, more than {MAX_NAME_CHARS}")]
    TooLong {
        what: &'static str,
        value: String,
        chars: usize,
    },
    #[error("{what} {value:?} contains a control character")]
    Control { what: &'static str, value: String },
    #[error("{what} {value:?} must not start or end with white space")]
    Padded { what: &'static str, value: String },
    #[error("FQAN {value:?} must start with '/' (e.g. /atlas/Role=production)")]
    FqanSlash { value: String },
}

pub use crate::excerpt::excerpt;

/// [`check`] for a name that goes into identifiers and DNs: at most [`MAX_NAME_CHARS`].
fn check_name(what: &'static str, value: &str) -> Result<(), NameError> {
    check_length(what, value)?;
    check(what, value)
}

/// Refuses `value` (a `what`) past [`MAX_NAME_CHARS`]: for text that is a name elsewhere too
/// (a GPU model is APEL's Model column and part of IDs and DNs).
pub(crate) fn check_length(what: &'static str, value: &str) -> Result<(), NameError> {
    let chars = value.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(NameError::TooLong {
            what,
            value: excerpt(value),
            chars,
        });
    }
    Ok(())
}

fn check(what: &'static str, value: &str) -> Result<(), NameError> {
    if value.is_empty() {
        return Err(NameError::Empty { what });
    }
    if value.chars().any(char::is_control) {
        return Err(NameError::Control {
            what,
            value: excerpt(value),
        });
    }
    if value.trim() != value {
        return Err(NameError::Padded {
            what,
            value: excerpt(value),
        });
    }
    Ok(())
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        ///
        /// Shared text: a clone is a reference count, as one name (a site, a VO, a model) is
        /// repeated in every record, offer and share that carries it.
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(std::sync::Arc<str>);

        impl $name {
            /// Validates and wraps `value`.
            pub fn new(value: impl AsRef<str>) -> Result<Self, NameError> {
                let value = value.as_ref();
                Self::validate(value)?;
                Ok(Self(std::sync::Arc::from(value)))
            }

            /// A name known to be valid when the program is written (a default, a fixed
            /// attribute value): the one spelling of such constants.
            ///
            /// # Panics
            /// On an invalid literal: a programming error caught by any test that reaches it.
            pub fn literal(value: &'static str) -> Self {
                match Self::new(value) {
                    Ok(name) => name,
                    Err(err) => panic!("invalid {} literal {value:?}: {err}", $what),
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The shared text itself, for holders that keep it without the type (a storage row):
            /// cloning it is a reference count, not a copy.
            pub fn shared(&self) -> &std::sync::Arc<str> {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<&str> for $name {
            type Error = NameError;
            fn try_from(value: &str) -> Result<Self, NameError> {
                Self::new(value)
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = String::deserialize(deserializer)?;
                Self::new(value).map_err(serde::de::Error::custom)
            }
        }
    };
}

name_type!(
    /// A site's name as the federation knows it (GOCDB short name), e.g. `CESNET-MCC`.
    SiteName,
    "site name"
);
name_type!(
    /// A virtual organisation, e.g. `atlas` or `vo.access.egi.eu`.
    VoName,
    "VO name"
);
name_type!(
    /// A VOMS fully qualified attribute name, e.g. `/atlas/Role=production`.
    Fqan,
    "FQAN"
);
name_type!(
    /// An identifier local to one site and one kind of entity (a flavor id, a partition, a node type).
    /// The global GLUE2 id is derived from it (see [`crate::glue::ids`]).
    LocalId,
    "local id"
);
name_type!(
    /// A free-text name or value that must still be non-empty and printable.
    Text,
    "text"
);

impl SiteName {
    fn validate(value: &str) -> Result<(), NameError> {
        check_name("site name", value)
    }
}

impl VoName {
    fn validate(value: &str) -> Result<(), NameError> {
        check_name("VO name", value)
    }
}

impl LocalId {
    fn validate(value: &str) -> Result<(), NameError> {
        check_name("local id", value)
    }
}

impl Text {
    fn validate(value: &str) -> Result<(), NameError> {
        check("text", value)
    }
}

impl Fqan {
    fn validate(value: &str) -> Result<(), NameError> {
        check_name("FQAN", value)?;
        if !value.starts_with('/') {
            return Err(NameError::FqanSlash {
                value: excerpt(value),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_padded_names_are_refused_with_the_reason() {
        assert_eq!(
            SiteName::new("").unwrap_err(),
            NameError::Empty { what: "site name" }
        );
        assert!(matches!(
            VoName::new(" atlas"),
            Err(NameError::Padded { .. })
        ));
        assert!(matches!(
            VoName::new("atlas "),
            Err(NameError::Padded { .. })
        ));
        assert!(matches!(
            LocalId::new("a\nb"),
            Err(NameError::Control { .. })
        ));
        assert!(matches!(
            Fqan::new("atlas/Role=x"),
            Err(NameError::FqanSlash { .. })
        ));
    }

    #[test]
    fn special_and_non_ascii_characters_are_kept_for_the_renderers_to_escape() {
        let name = SiteName::new("#Ünï,+\"\\<>;=").unwrap();
        assert_eq!(name.as_str(), "#Ünï,+\"\\<>;=");
    }

    #[test]
    fn names_past_255_characters_are_refused_and_errors_quote_an_excerpt() {
        let long = "é".repeat(MAX_NAME_CHARS + 1);
        let error = LocalId::new(&long).unwrap_err();
        assert!(
            matches!(error, NameError::TooLong { chars: 256, .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.len() < 200, "{message}");
        assert!(
            message.contains("256 characters long, more than 255"),
            "{message}"
        );
        assert!(LocalId::new("é".repeat(MAX_NAME_CHARS)).is_ok());
        // Free text is not a name: long descriptions pass, but a bad one is quoted short.
        assert!(Text::new("x".repeat(10_000)).is_ok());
        let bad = format!("{}\u{7}", "x".repeat(10_000));
        assert!(Text::new(bad).unwrap_err().to_string().len() < 200);
    }

    #[test]
    fn deserializing_validates() {
        let err = serde_json::from_str::<VoName>("\"\"").unwrap_err();
        assert!(
            err.to_string().contains("VO name must not be empty"),
            "{err}"
        );
    }
}
