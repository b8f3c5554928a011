//! Deterministic record ids (house-style rule 8): the id is a function of the record's identity
//! alone, so a re-sent record replaces its earlier version everywhere (spool, repository, APEL)
//! instead of adding to it.
//!
//! The identity is APEL's key for accelerator records: (SiteName, AssociatedRecordType,
//! AssociatedRecord, Model, MeasurementYear, MeasurementMonth). The id is the lower-case hex
//! SHA-256 of a canonical text of that identity:
//!
//! ```text
//! accelfed-usage-v1\n
//! <len>:<site>\n <len>:<cloud|job>\n <len>:<associated record>\n <len>:<model>\n <len>:<YYYY-MM>\n
//! ```
//!
//! (no spaces; `<len>` is the value's length in UTF-8 bytes). Length prefixes make the encoding
//! unambiguous whatever the values contain, and the version tag lets a future identity change
//! coexist with stored ids. The values are used exactly as given (case and spacing included): a
//! meter always names a resource the same way, and normalising here would merge records that a
//! site keeps apart.

use std::fmt::{self, Write as _};

use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};

use super::kind::RecordType;

/// What identifies a usage record, borrowed from it (or from raw input that failed validation,
/// so that errors can still name the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity<'a> {
    pub site: &'a str,
    pub record_type: RecordType,
    pub associated_record: &'a str,
    pub model: &'a str,
    pub year: i32,
    pub month: u32,
}

impl Identity<'_> {
    /// The canonical text the id hashes (see the module documentation).
    pub fn canonical(&self) -> String {
        let month = format!("{:04}-{:02}", self.year, self.month);
        let mut text = String::from("accelfed-usage-v1\n");
        for value in [
            self.site,
            self.record_type.as_str(),
            self.associated_record,
            self.model,
            &month,
        ] {
            // Writing to a String cannot fail.
            let _ = writeln!(text, "{}:{value}", value.len());
        }
        text
    }

    /// The SHA-256 of [`Self::canonical`], hashed piece by piece (no text is built: ingest computes
    /// this for every record it receives).
    pub fn digest(&self) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(b"accelfed-usage-v1\n");
        let mut month = *b"0000-00";
        if (0..=9999).contains(&self.year) && self.month <= 99 {
            let year = self.year.unsigned_abs();
            for (i, divisor) in [1000, 100, 10, 1].into_iter().enumerate() {
                month[i] = b'0' + (year / divisor % 10) as u8;
            }
            month[5] = b'0' + (self.month / 10) as u8;
            month[6] = b'0' + (self.month % 10) as u8;
        } else {
            // Outside what a valid record holds (errors still name the id): the slow way.
            return Sha256::digest(self.canonical().as_bytes()).into();
        }
        for value in [
            self.site.as_bytes(),
            self.record_type.as_str().as_bytes(),
            self.associated_record.as_bytes(),
            self.model.as_bytes(),
            &month,
        ] {
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut len = value.len();
            loop {
                at -= 1;
                digits[at] = b'0' + (len % 10) as u8;
                len /= 10;
                if len == 0 {
                    break;
                }
            }
            hasher.update(&digits[at..]);
            hasher.update(b":");
            hasher.update(value);
            hasher.update(b"\n");
        }
        hasher.finalize().into()
    }

    pub fn id(&self) -> RecordId {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut hex = String::with_capacity(64);
        for byte in self.digest() {
            hex.push(char::from(HEX[usize::from(byte >> 4)]));
            hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        RecordId(hex)
    }
}

impl fmt::Display for Identity<'_> {
    /// A short human form for messages: `CESNET-MCC cloud 0f3c... A100 2026-01`. Its texts are
    /// excerpts: an identity is printed for records that were refused, whose texts may be huge.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::excerpt::excerpt;
        write!(
            f,
            "{} {} {} {:?} {:04}-{:02}",
            excerpt(self.site),
            self.record_type,
            excerpt(self.associated_record),
            excerpt(self.model),
            self.year,
            self.month
        )
    }
}

/// Why a text is not a record id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record id {0:?} is not 64 lower-case hex digits")]
pub struct RecordIdError(pub String);

/// A record's id: 64 lower-case hex digits (SHA-256 of its identity).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RecordId(String);

impl RecordId {
    /// Parses a stored or received id.
    pub fn parse(text: &str) -> Result<Self, RecordIdError> {
        let valid = text.len() == 64
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if valid {
            Ok(Self(text.to_owned()))
        } else {
            Err(RecordIdError(text.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for RecordId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for RecordId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity<'static> {
        Identity {
            site: "CESNET-MCC",
            record_type: RecordType::Cloud,
            associated_record: "0f3c2a1e-7d1b-4b4e-9a57-1c2d3e4f5a6b",
            model: "NVIDIA A100-SXM4-80GB",
            year: 2026,
            month: 1,
        }
    }

    #[test]
    fn the_id_is_a_fixed_function_of_the_identity() {
        // Pinned: changing the derivation would make every site re-send its history as new records.
        assert_eq!(
            identity().canonical(),
            "accelfed-usage-v1\n10:CESNET-MCC\n5:cloud\n36:0f3c2a1e-7d1b-4b4e-9a57-1c2d3e4f5a6b\n\
             21:NVIDIA A100-SXM4-80GB\n7:2026-01\n"
        );
        let id = identity().id();
        assert_eq!(id, identity().id());
        assert_eq!(RecordId::parse(id.as_str()), Ok(id.clone()));
        assert_eq!(
            id.as_str(),
            "042044e04d5e8d7bdcb781ef5a6f39fb8a93cd10ae55f24f1db6f4d7d9f2fed9"
        );
    }

    #[test]
    fn the_digest_hashes_exactly_the_canonical_text() {
        let long = "x".repeat(12_345);
        for (site, associated_record, year, month) in [
            ("CESNET-MCC", "vm-1", 2026, 1),
            ("S", "", 1, 12),
            ("SITE-\u{e9}", long.as_str(), 9999, 99),
            ("A", "job:7", -3, 0),
            ("A", "job:7", 10_000, 100),
        ] {
            let identity = Identity {
                site,
                associated_record,
                year,
                month,
                ..identity()
            };
            let expected: [u8; 32] = Sha256::digest(identity.canonical().as_bytes()).into();
            assert_eq!(identity.digest(), expected, "{identity}");
        }
    }

    #[test]
    fn every_identity_field_changes_the_id() {
        let base = identity().id();
        let variants = [
            Identity {
                site: "CESNET-MCC2",
                ..identity()
            },
            Identity {
                record_type: RecordType::Job,
                ..identity()
            },
            Identity {
                associated_record: "other",
                ..identity()
            },
            Identity {
                model: "NVIDIA H100",
                ..identity()
            },
            Identity {
                year: 2025,
                ..identity()
            },
            Identity {
                month: 2,
                ..identity()
            },
        ];
        for variant in variants {
            assert_ne!(variant.id(), base, "{variant}");
        }
    }

    #[test]
    fn field_boundaries_cannot_be_shifted() {
        let a = Identity {
            site: "A B",
            associated_record: "C",
            ..identity()
        };
        let b = Identity {
            site: "A",
            associated_record: "B C",
            ..identity()
        };
        assert_ne!(a.id(), b.id());
    }

    #[test]
    fn malformed_ids_are_refused() {
        assert!(RecordId::parse("abc").is_err());
        assert!(RecordId::parse(&"A".repeat(64)).is_err());
        assert!(serde_json::from_str::<RecordId>(&format!("\"{}\"", "g".repeat(64))).is_err());
    }
}
