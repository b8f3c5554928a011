//! GPU and node memory in MB, GLUE2's unit (10^6 bytes). Inputs come in GB (flavor properties), MiB
//! (nvidia-smi, Kubernetes labels) and GiB (vendor sheets); all are converted here, once.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// Why a memory size was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error(
        "memory {0:?} has no number (expected e.g. \"80 GB\", \"81559 MiB\" or a number of MB)"
    )]
    NoNumber(String),
    #[error("memory {value:?} has an unknown unit {unit:?} (expected MB, GB, TB, MiB, GiB or TiB)")]
    UnknownUnit { value: String, unit: String },
    #[error("memory {0:?} must be a positive finite size")]
    OutOfRange(String),
}

/// A memory size in MB (10^6 bytes), rounded to the nearest MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct MemoryMb(u64);

const MB: f64 = 1e6;

impl MemoryMb {
    pub fn new(mb: u64) -> Self {
        Self(mb)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    /// Converts MiB (2^20 bytes), as nvidia-smi and GPU Feature Discovery report it.
    pub fn from_mib(mib: u64) -> Self {
        Self((mib as f64 * 1_048_576.0 / MB).round() as u64)
    }

    /// Parses `"80GB"`, `"80 GB"`, `"81559 MiB"`, `"1.5 TB"` or a plain number of MB.
    pub fn parse(text: &str) -> Result<Self, MemoryError> {
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        if number.is_empty() {
            return Err(MemoryError::NoNumber(text.to_owned()));
        }
        let value: f64 = number
            .parse()
            .map_err(|_| MemoryError::NoNumber(text.to_owned()))?;
        let bytes_per_unit = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "mb" => MB,
            "gb" => 1e9,
            "tb" => 1e12,
            "mib" => 1_048_576.0,
            "gib" => 1_073_741_824.0,
            "tib" => 1_099_511_627_776.0,
            _ => {
                return Err(MemoryError::UnknownUnit {
                    value: text.to_owned(),
                    unit: unit.trim().to_owned(),
                });
            }
        };
        let mb = (value * bytes_per_unit / MB).round();
        if !mb.is_finite() || mb <= 0.0 || mb > u64::MAX as f64 {
            return Err(MemoryError::OutOfRange(text.to_owned()));
        }
        Ok(Self(mb as u64))
    }
}

impl fmt::Display for MemoryMb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl<'de> Deserialize<'de> for MemoryMb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Mb(i64),
            Text(String),
        }
        match Raw::deserialize(deserializer)? {
            Raw::Mb(mb) if mb > 0 => Ok(Self(mb as u64)),
            Raw::Mb(mb) => Err(serde::de::Error::custom(MemoryError::OutOfRange(
                mb.to_string(),
            ))),
            Raw::Text(text) => Self::parse(&text).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_every_unit_to_mb() {
        assert_eq!(MemoryMb::parse("80GB").unwrap().get(), 80_000);
        assert_eq!(MemoryMb::parse("80 GB").unwrap().get(), 80_000);
        assert_eq!(MemoryMb::parse("40960").unwrap().get(), 40_960);
        assert_eq!(MemoryMb::parse("81559 MiB").unwrap().get(), 85_521);
        assert_eq!(MemoryMb::from_mib(81_559).get(), 85_521);
        assert_eq!(MemoryMb::parse("1 GiB").unwrap().get(), 1_074);
        assert_eq!(MemoryMb::parse("1.5 TB").unwrap().get(), 1_500_000);
    }

    #[test]
    fn unknown_units_and_garbage_are_refused_with_the_value() {
        let err = MemoryMb::parse("80 XB").unwrap_err();
        assert_eq!(
            err,
            MemoryError::UnknownUnit {
                value: "80 XB".into(),
                unit: "XB".into()
            }
        );
        assert!(
            err.to_string()
                .contains("expected MB, GB, TB, MiB, GiB or TiB")
        );
        assert!(matches!(
            MemoryMb::parse("GB"),
            Err(MemoryError::NoNumber(_))
        ));
        assert!(matches!(
            MemoryMb::parse("1.2.3 GB"),
            Err(MemoryError::NoNumber(_))
        ));
        assert!(matches!(
            MemoryMb::parse("0 GB"),
            Err(MemoryError::OutOfRange(_))
        ));
        assert!(serde_json::from_str::<MemoryMb>("-5").is_err());
    }
}
