//! GPU model names. Sites write the same card many ways (`NVIDIA A100-SXM4-80GB`, `Tesla A100`,
//! `a100`); we publish the name as the device reports it and match loosely, by tokens, with vendor and
//! marketing words dropped.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::names::{NameError, Text};

/// Words that name the vendor or a product line rather than the model.
const NOISE: &[&str] = &[
    "nvidia", "tesla", "amd", "instinct", "radeon", "intel", "geforce", "quadro", "rtx", "pcie",
    "sxm",
];

/// A GPU model as the device names itself, e.g. `NVIDIA H100 80GB HBM3`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct GpuModel(Text);

impl GpuModel {
    pub fn new(name: impl AsRef<str>) -> Result<Self, NameError> {
        Text::new(name).map(Self)
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The one canonical name of the GPU `raw` names (the product name the vendor's own tools
    /// print, e.g. `NVIDIA H100 80GB HBM3`), from whatever a source wrote: GFD's `gpu.product`,
    /// DCGM's `modelName`, a Slurm GRES type mapped in configuration, nvidia-smi, manual usage.
    /// Every source goes through here, so one GPU is one model in documents, records and reports.
    /// A name not in the catalogue passes through unchanged.
    pub fn canonical(raw: &str) -> Result<Self, NameError> {
        Self::new(raw)
    }

    /// The shared text of the name; see [`Text::shared`].
    pub fn shared(&self) -> &std::sync::Arc<str> {
        self.0.shared()
    }

    /// Lower-case tokens with vendor and product-line words removed: `NVIDIA A100-SXM4-80GB` ->
    /// `["a100", "sxm4", "80gb"]`.
    pub fn tokens(&self) -> Vec<String> {
        tokens(self.as_str())
    }

    /// The model family, the first token that is letters followed by digits (`a100`, `h100`, `mi250x`,
    /// `l40s`), when there is one.
    pub fn family(&self) -> Option<String> {
        self.tokens().into_iter().find(|token| {
            let letters = token.chars().take_while(char::is_ascii_alphabetic).count();
            letters > 0 && token[letters..].starts_with(|c: char| c.is_ascii_digit())
        })
    }

    /// Whether a user's query names this model: every token of the query appears among the model's
    /// tokens. `A100`, `Tesla A100` and `a100-sxm4` all match `NVIDIA A100-SXM4-80GB`.
    pub fn matches(&self, query: &str) -> bool {
        let wanted = tokens(query);
        let have = self.tokens();
        !wanted.is_empty() && wanted.iter().all(|token| have.contains(token))
    }
}

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|token| !token.is_empty())
        .map(str::to_lowercase)
        .filter(|token| !NOISE.contains(&token.as_str()))
        .collect()
}

impl AsRef<str> for GpuModel {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GpuModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Text::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_match_the_name_the_device_reports() {
        let model = GpuModel::new("NVIDIA A100-SXM4-80GB").unwrap();
        for query in [
            "A100",
            "a100",
            "Tesla A100",
            "NVIDIA A100-SXM4-80GB",
            "a100 80gb",
        ] {
            assert!(model.matches(query), "{query}");
        }
        for query in ["H100", "A10", "", "NVIDIA"] {
            assert!(!model.matches(query), "{query}");
        }
        assert_eq!(model.family().as_deref(), Some("a100"));
    }

    #[test]
    fn families_of_other_vendors() {
        assert_eq!(
            GpuModel::new("AMD Instinct MI250X")
                .unwrap()
                .family()
                .as_deref(),
            Some("mi250x")
        );
        assert_eq!(
            GpuModel::new("NVIDIA H100 80GB HBM3")
                .unwrap()
                .family()
                .as_deref(),
            Some("h100")
        );
        assert_eq!(
            GpuModel::new("Tesla V100-PCIE-32GB")
                .unwrap()
                .family()
                .as_deref(),
            Some("v100")
        );
    }
}
