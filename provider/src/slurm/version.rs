//! Which Slurm data format a response is in, read from its `meta` block.
//!
//! 22.05 names its format in `meta.plugin.type` (`openapi/v0.0.38`, `openapi/dbv0.0.38`); 23.02 and
//! later name it in `meta.plugin.data_parser` (`data_parser/v0.0.40`). The parsers know v0.0.38 to
//! v0.0.44; anything else is refused with the version it found, because a format we have not seen
//! may move the fields that carry GPUs and we would publish wrong numbers rather than none.

use serde::Deserialize;

/// The minor numbers of the `v0.0.NN` data versions the parsers know, oldest first.
pub const KNOWN_MINORS: std::ops::RangeInclusive<u8> = 38..=44;

/// The data formats this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DataVersion {
    /// Slurm 22.05: plain numbers, single states.
    V0038,
    /// Slurm 23.02 to 25.x (v0.0.39 to v0.0.44): `{set, infinite, number}`, state arrays.
    Modern(u8),
}

impl DataVersion {
    /// Parses `v0.0.40`, `openapi/dbv0.0.38`, `data_parser/v0.0.41+complex`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let start = text
            .rfind("v0.0.")
            .ok_or_else(|| format!("no data version in {text:?}"))?;
        let digits: String = text[start + 5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        match digits.parse::<u8>() {
            Ok(minor) if KNOWN_MINORS.contains(&minor) => Ok(Self::from_minor(minor)),
            _ => Err(format!(
                "data version {} is not one accelfed knows (v0.0.38 to v0.0.44)",
                &text[start..]
            )),
        }
    }

    /// The version of a known minor number (see [`KNOWN_MINORS`]).
    pub fn from_minor(minor: u8) -> Self {
        if minor == 38 {
            Self::V0038
        } else {
            Self::Modern(minor)
        }
    }

    pub fn name(self) -> String {
        match self {
            Self::V0038 => "v0.0.38".to_owned(),
            Self::Modern(minor) => format!("v0.0.{minor}"),
        }
    }
}

/// The parts of `meta` that say which format and which Slurm.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Meta {
    #[serde(default)]
    pub plugin: Plugin,
    /// 22.05 and 23.02 spell it `Slurm`, later releases `slurm`.
    #[serde(default, alias = "Slurm")]
    pub slurm: SlurmRelease,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Plugin {
    #[serde(default, rename = "type", deserialize_with = "super::json::opt_string")]
    pub kind: String,
    #[serde(default, deserialize_with = "super::json::opt_string")]
    pub data_parser: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct SlurmRelease {
    #[serde(default, deserialize_with = "super::json::opt_string")]
    pub release: String,
}

impl Meta {
    /// The data format this response is in.
    pub fn version(&self) -> Result<DataVersion, String> {
        if !self.plugin.data_parser.is_empty() {
            DataVersion::parse(&self.plugin.data_parser)
        } else if !self.plugin.kind.is_empty() {
            DataVersion::parse(&self.plugin.kind)
        } else {
            Err("the response's meta block names no data format".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_both_meta_layouts() {
        let old: Meta = serde_json::from_str(
            r#"{"plugin":{"type":"openapi\/dbv0.0.38","name":"Slurm OpenAPI DB v0.0.38"},
                "Slurm":{"version":{"major":22,"micro":8,"minor":5},"release":"22.05.8"}}"#,
        )
        .unwrap();
        assert_eq!(old.version(), Ok(DataVersion::V0038));
        assert_eq!(old.slurm.release, "22.05.8");
        let new: Meta = serde_json::from_str(
            r#"{"plugin":{"type":"","name":"","data_parser":"data_parser/v0.0.41","accounting_storage":"accounting_storage/slurmdbd"},
                "slurm":{"version":{"major":"24","micro":"3","minor":"05"},"release":"24.05.3","cluster":"c1"}}"#,
        )
        .unwrap();
        assert_eq!(new.version(), Ok(DataVersion::Modern(41)));
    }

    #[test]
    fn unknown_versions_are_refused_by_name() {
        assert_eq!(
            DataVersion::parse("data_parser/v0.0.45"),
            Err("data version v0.0.45 is not one accelfed knows (v0.0.38 to v0.0.44)".to_owned())
        );
        assert!(DataVersion::parse("openapi/v0.0.37").is_err());
        assert!(Meta::default().version().is_err());
    }
}
