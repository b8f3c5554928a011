//! GPU model names. Sites write the same card many ways (`NVIDIA A100-SXM4-80GB`, `Tesla A100`,
//! `a100`); we publish the name as the device reports it and match loosely, by tokens, with vendor and
//! marketing words dropped.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use super::catalog;
use crate::names::{NameError, Text};

/// What [`GpuModel::canonical_with_note`] made of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recognised {
    /// A catalogued product; the name is now its canonical name.
    Catalogue,
    /// A family name that several catalogued products share (the canonical names listed); kept
    /// as given.
    Family(Vec<&'static str>),
    /// Not in the catalogue; kept as given.
    Unknown,
}

impl Recognised {
    /// The warning a caller logs (once per name) for a name it could not place, naming it.
    pub fn warning(&self, raw: &str) -> Option<String> {
        match self {
            Self::Catalogue => None,
            Self::Family(variants) => Some(format!(
                "GPU model {raw:?} names a family of several products ({}); kept as given, name the product to count it with it",
                variants.join(", ")
            )),
            Self::Unknown => Some(format!(
                "GPU model {raw:?} is not in the model catalogue; kept as given"
            )),
        }
    }
}

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
    /// A model name as given: like a name, at most 255 characters (APEL's Model column; model
    /// names are part of IDs and DNs).
    pub fn new(name: impl AsRef<str>) -> Result<Self, NameError> {
        let name = name.as_ref();
        crate::names::check_length("GPU model", name)?;
        Text::new(name).map(Self)
    }

    /// See [`Text::literal`].
    pub fn literal(name: &'static str) -> Self {
        Self(Text::literal(name))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The one canonical name of the GPU `raw` names (the product name the vendor's own tools
    /// print, e.g. `NVIDIA H100 80GB HBM3`), from whatever a source wrote: GFD's `gpu.product`,
    /// DCGM's `modelName`, a Slurm GRES type mapped in configuration, nvidia-smi, manual usage.
    /// Every source goes through here, so one GPU is one model in documents, records and reports.
    /// A name not in the catalogue passes through unchanged; see [`GpuModel::canonical_with_note`]
    /// for what callers should tell the operator.
    pub fn canonical(raw: &str) -> Result<Self, NameError> {
        Self::canonical_with_note(raw).map(|(model, _)| model)
    }

    /// [`GpuModel::canonical`] with what the catalogue made of the name, so the caller (schemas
    /// does no IO) can warn, once per name, about names it could not place.
    ///
    /// - A name the catalogue knows, in any source's spelling (GFD's dashes and `-SHARED` /
    ///   `-MIG-<profile>` suffixes, nvidia-smi's ` MIG <profile>` device names, pci.ids names,
    ///   names of older drivers), becomes the canonical name: [`Recognised::Catalogue`].
    /// - A family-only name (`H100`, `a100`, `Tesla V100`) of a family with several memory or
    ///   form-factor variants is kept as given (trimmed): it does not say which variant, and
    ///   guessing would merge GPU-hours of different products. [`Recognised::Family`] lists the
    ///   variants. A family with one variant (`T4`, `L40S`) is that variant.
    /// - Anything else passes through unchanged (trimmed, sharing suffixes removed):
    ///   [`Recognised::Unknown`].
    pub fn canonical_with_note(raw: &str) -> Result<(Self, Recognised), NameError> {
        if let Some(entry) = catalog::lookup(raw) {
            return Ok((Self::new(entry.name)?, Recognised::Catalogue));
        }
        let (name, _) = catalog::strip_sharing(raw);
        let variants = catalog::family(&catalog::key(name));
        if let [only] = variants.as_slice() {
            return Ok((Self::new(only.name)?, Recognised::Catalogue));
        }
        let recognised = if variants.is_empty() {
            Recognised::Unknown
        } else {
            Recognised::Family(variants.iter().map(|entry| entry.name).collect())
        };
        Ok((Self::new(name)?, recognised))
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
    fn a_model_name_longer_than_apels_column_is_refused_quoted_short() {
        assert!(GpuModel::new("x".repeat(255)).is_ok());
        let err = GpuModel::new("x".repeat(1_000_000))
            .unwrap_err()
            .to_string();
        assert!(err.len() < 200, "{err}");
        assert!(err.contains("GPU model"), "{err}");
    }

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

    fn canonical(raw: &str) -> (String, Recognised) {
        let (model, note) = GpuModel::canonical_with_note(raw).unwrap();
        (model.as_str().to_owned(), note)
    }

    #[test]
    fn every_source_spelling_of_one_gpu_is_one_model() {
        let cases = [
            // GFD `nvidia.com/gpu.product` values.
            ("NVIDIA-H100-80GB-HBM3", "NVIDIA H100 80GB HBM3"),
            ("NVIDIA-A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
            ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA A100-SXM4-40GB"),
            ("NVIDIA-A100-80GB-PCIe", "NVIDIA A100 80GB PCIe"),
            (
                "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb-SHARED",
                "NVIDIA A100 80GB PCIe",
            ),
            ("Tesla-T4-SHARED", "Tesla T4"),
            ("NVIDIA-Tesla-T4", "Tesla T4"),
            ("NVIDIA-L40S", "NVIDIA L40S"),
            ("NVIDIA-L4-SHARED", "NVIDIA L4"),
            ("Tesla-V100-SXM2-32GB", "Tesla V100-SXM2-32GB"),
            // nvidia-smi and DCGM `modelName` (NVML's name), older drivers without `NVIDIA `.
            ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
            ("A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
            ("A100-PCIE-40GB", "NVIDIA A100-PCIE-40GB"),
            ("NVIDIA A100-SXM4-80GB MIG 3g.40gb", "NVIDIA A100-SXM4-80GB"),
            ("Tesla V100-PCIE-16GB", "Tesla V100-PCIE-16GB"),
            // pci.ids product names.
            ("A100 PCIe 80GB", "NVIDIA A100 80GB PCIe"),
            ("H100 SXM5 80GB", "NVIDIA H100 80GB HBM3"),
            // AMD: amd-smi, the AMD labeller's `Instinct_MI210`, lower case.
            ("AMD Instinct MI250X", "AMD Instinct MI250X"),
            ("Instinct_MI210", "AMD Instinct MI210"),
            ("mi300x", "AMD Instinct MI300X"),
            // Manual usage: families with one product are that product.
            ("T4", "Tesla T4"),
            ("l40s", "NVIDIA L40S"),
            ("V100S", "Tesla V100S-PCIE-32GB"),
        ];
        for (raw, want) in cases {
            assert_eq!(
                canonical(raw),
                (want.to_owned(), Recognised::Catalogue),
                "{raw}"
            );
        }
    }

    #[test]
    fn the_h100_capture_is_already_canonical() {
        let csv = include_str!("../../tests/fixtures/gpu/h100-query-gpu.csv");
        let row = csv.lines().nth(1).unwrap();
        let name = row.split(", ").nth(2).unwrap();
        assert_eq!(name, "NVIDIA H100 80GB HBM3");
        assert_eq!(canonical(name), (name.to_owned(), Recognised::Catalogue));
        // GFD's label of the same card.
        assert_eq!(canonical("NVIDIA-H100-80GB-HBM3").0, name);
    }

    #[test]
    fn family_names_are_kept_as_given_and_unknown_names_pass_through() {
        let (name, note) = canonical("H100");
        assert_eq!(name, "H100");
        let Recognised::Family(variants) = &note else {
            panic!("{note:?}");
        };
        assert_eq!(
            variants,
            &[
                "NVIDIA H100 80GB HBM3",
                "NVIDIA H100 PCIe",
                "NVIDIA H100 NVL"
            ]
        );
        assert!(note.warning("H100").unwrap().contains("NVIDIA H100 PCIe"));
        assert!(matches!(canonical(" a100 ").1, Recognised::Family(v) if v.len() == 4));
        assert_eq!(canonical(" a100 ").0, "a100");
        assert!(matches!(canonical("Tesla V100").1, Recognised::Family(_)));
        // Still found by a report or query for the family.
        assert!(GpuModel::canonical("H100").unwrap().matches("h100"));
        let (name, note) = canonical("NVIDIA-GeForce-RTX-4090-SHARED");
        assert_eq!(
            (name.as_str(), &note),
            ("NVIDIA-GeForce-RTX-4090", &Recognised::Unknown)
        );
        assert_eq!(
            note.warning("NVIDIA-GeForce-RTX-4090-SHARED").unwrap(),
            "GPU model \"NVIDIA-GeForce-RTX-4090-SHARED\" is not in the model catalogue; kept as given"
        );
        assert!(GpuModel::canonical("  ").is_err());
    }
}
