//! `[[openstack]]`: one OpenStack cloud, read through its APIs as an admin.
//!
//! Credentials never live in this file: it names a `clouds.yaml` entry (or leaves it to `OS_CLOUD`
//! and the `OS_*` variables), so the same file can be checked into a site's configuration
//! repository. What the APIs cannot tell (which GPU a PCI alias or a vGPU type is, which VO a
//! project serves when the project has no property) is said here.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use accelfed_schemas::glue::OsFamily;
use accelfed_schemas::gpu::vgpu::{self, VgpuShare};
use accelfed_schemas::gpu::{AcceleratorType, GpuModel, MemoryMb, Virtualization};
use accelfed_schemas::names::{LocalId, Text, VoName};

use crate::config::Problem;

/// One OpenStack cloud.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenstackConfig {
    /// Unique among the site's services; part of every GLUE2 ID beneath it.
    pub id: Spanned<LocalId>,
    /// Human-readable name of the service.
    pub name: Option<Text>,
    /// The entry of `clouds.yaml` to use; when absent, `OS_CLOUD`, and without that the `OS_*`
    /// environment variables (`OS_AUTH_URL`, `OS_USERNAME`, ...).
    pub cloud: Option<String>,
    /// A `clouds.yaml` to read instead of the standard search path (`./clouds.yaml`,
    /// `~/.config/openstack/`, `/etc/openstack/`); a `secure.yaml` beside it is merged in.
    pub clouds_file: Option<PathBuf>,
    /// A CA to trust besides the system's roots, for Keystone and the services of its catalog: a
    /// PEM file, or a folder of them such as `/etc/grid-security/certificates`. Wins over the
    /// `clouds.yaml` entry's `cacert` (and `OS_CACERT`), which are used where this is absent.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Overrides the region of the `clouds.yaml` entry.
    pub region: Option<String>,
    /// Overrides the catalog interface (`public`, `internal`, `admin`).
    pub interface: Option<String>,
    /// `production`, `pre-production`, `testing` or `development`.
    #[serde(default = "production")]
    pub quality_level: Text,
    /// The Keystone project property that names a project's VO (cASO's default is `VO`).
    #[serde(default = "vo_property")]
    pub vo_property: String,
    /// Project name or id -> VO, for projects without the property; wins over the property.
    #[serde(default)]
    pub vo_map: BTreeMap<String, VoName>,
    /// The flavor GPU conventions to read, in order of precedence; leave one out to ignore it.
    #[serde(default = "all_conventions")]
    pub conventions: Spanned<Vec<Convention>>,
    /// nova.conf `[pci] alias` names -> the GPU each one is.
    #[serde(default)]
    pub pci_alias: BTreeMap<String, DeviceConfig>,
    /// vGPU types -> the GPU; keyed by the `CUSTOM_*` trait a flavor requires (and the vGPU
    /// resource providers carry), or `default` for vGPU flavors without a known trait.
    #[serde(default)]
    pub vgpu_type: BTreeMap<String, DeviceConfig>,
    /// NVIDIA vGPU type names (`A100-10C`, `H100XM-20C`, the MIG-backed `A100-3-20C`, as the
    /// "Virtual GPU Types" tables of NVIDIA's vGPU user guide name them), keyed by a `CUSTOM_*`
    /// trait the VGPU resource providers carry, by a resource provider's name, or by the name a
    /// physical GPU's provider would have (`<host>_pci_0000_41_00_0`) for all the SR-IOV virtual
    /// functions behind it. The type says what one vGPU is of its physical GPU (A100-10C of a
    /// 40 GB A100: a quarter), which Placement cannot say on SR-IOV GPUs, where each virtual
    /// function is a provider holding one vGPU. Needed where the traits do not name the type
    /// (`CUSTOM_NVIDIA_471` after Nova's `nvidia-471`); a trait such as `CUSTOM_NVIDIA_A100_10C`
    /// names it by itself.
    #[serde(default)]
    pub vgpu_profile: BTreeMap<String, Spanned<String>>,
    /// Placement resource classes (`CUSTOM_PCI_10DE_20B5`, `CUSTOM_MY_GPU`) -> the GPU.
    /// `CUSTOM_PCI_<vendor>_<product>` classes not listed here are named from the PCI ids.
    #[serde(default)]
    pub resource_class: BTreeMap<String, DeviceConfig>,
    /// Seconds one HTTP request may take before it counts as failed.
    #[serde(default = "timeout")]
    pub timeout: u64,
    /// How many requests run at once against each of the cloud's services (Nova, Placement,
    /// Glance, Keystone each have their own limit).
    #[serde(default = "concurrency")]
    pub concurrency: usize,
    /// Publish Glance images (with their GPU driver and CUDA properties).
    #[serde(default = "yes")]
    pub images: bool,
    /// Meter stopped, suspended, paused and shelved servers as idle, from their instance actions
    /// (one Nova request per GPU server per run; see `states.rs`).
    #[serde(default = "yes")]
    pub idle_from_actions: bool,
    /// GLUE2's OSFamily of every flavor's VMs (`linux`, `macosx`, `windows`, `solaris`), for a
    /// cloud whose images do not say (`os_distro`); published as each instance type's OSFamily.
    pub os_family: Option<OsFamily>,
}

/// A flavor GPU convention (see `detect.rs` for the keys of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Convention {
    /// EGI's `Accelerator:Type|Vendor|Model|Number|Memory|VirtualizationType|Version`.
    Egi,
    /// `gpu_number`, `gpu_vendor`, `gpu_model`, `gpu_memory`.
    Legacy,
    /// `pci_passthrough:alias = alias:count[,alias:count]`.
    PciAlias,
    /// `resources[N]:VGPU` with the type from `trait[N]:CUSTOM_*`.
    Vgpu,
    /// `resources[N]:CUSTOM_PCI_<VENDOR>_<PRODUCT>` and configured custom classes.
    ResourceClass,
}

impl Convention {
    /// The name used in the configuration file and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Convention::Egi => "egi",
            Convention::Legacy => "legacy",
            Convention::PciAlias => "pci-alias",
            Convention::Vgpu => "vgpu",
            Convention::ResourceClass => "resource-class",
        }
    }
}

/// What a PCI alias, vGPU type or resource class is.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// `GPU` (default), `FPGA`, `MIC` or `Other`.
    #[serde(default, rename = "type")]
    pub kind: AcceleratorType,
    /// `NVIDIA`, `AMD`, `Intel`...
    pub vendor: Text,
    /// As the device names itself: `Tesla V100-PCIE-32GB`.
    pub model: GpuModel,
    /// Memory per device: `32 GB`, `40960 MiB`, or a number of MB.
    pub memory: Option<MemoryMb>,
    /// Overrides the virtualization the convention implies (passthrough for PCI, vgpu for VGPU).
    pub virtualization: Option<Virtualization>,
    /// For a PCI alias: the `vendor_id` of its nova.conf definition (`10de`), so the Placement
    /// class Nova reports the devices under (`CUSTOM_PCI_10DE_1DB4`) is named like the alias.
    pub vendor_id: Option<String>,
    /// For a PCI alias: the `product_id` of its nova.conf definition (`1db4`).
    pub product_id: Option<String>,
    /// For a vGPU type: how many instances of it one physical GPU holds (`A100-4C` of a 40 GB
    /// A100: 10), so a VM's vGPU is metered as that share of a GPU. What the cloud says wins
    /// where it says it (an mdev GPU's VGPU inventory, the NVIDIA type of `vgpu_profile` or of the
    /// trait's name); this is for clouds where nothing does.
    pub per_gpu: Option<u32>,
}

impl DeviceConfig {
    /// The Placement resource class Nova reports this PCI device under, when the ids are known.
    pub fn pci_class(&self) -> Option<String> {
        let vendor = self.vendor_id.as_deref()?;
        let product = self.product_id.as_deref()?;
        Some(format!(
            "CUSTOM_PCI_{}_{}",
            vendor.to_ascii_uppercase(),
            product.to_ascii_uppercase()
        ))
    }
}

fn production() -> Text {
    Text::literal("production")
}
fn vo_property() -> String {
    "VO".to_owned()
}
fn all_conventions() -> Spanned<Vec<Convention>> {
    Spanned::new(
        0..0,
        vec![
            Convention::Egi,
            Convention::Legacy,
            Convention::PciAlias,
            Convention::Vgpu,
            Convention::ResourceClass,
        ],
    )
}
fn timeout() -> u64 {
    30
}
fn concurrency() -> usize {
    8
}
fn yes() -> bool {
    true
}

impl OpenstackConfig {
    /// Checks what serde cannot: no convention twice, sane limits.
    pub fn validate(&self) -> Result<(), Problem> {
        let conventions = self.conventions.get_ref();
        for (index, convention) in conventions.iter().enumerate() {
            if conventions[..index].contains(convention) {
                return Err(problem(
                    &self.conventions,
                    "conventions",
                    format!("convention {:?} is listed twice", convention.as_str()),
                ));
            }
        }
        if self.timeout == 0 {
            return Err(problem(&self.id, "timeout", "must be at least 1 second"));
        }
        if self.concurrency == 0 {
            return Err(problem(&self.id, "concurrency", "must be at least 1"));
        }
        if self.vo_property.trim().is_empty() {
            return Err(problem(&self.id, "vo_property", "must not be empty"));
        }
        for (name, device) in &self.vgpu_type {
            if device.per_gpu == Some(0) {
                return Err(problem(
                    &self.id,
                    &format!("vgpu_type.{name}.per_gpu"),
                    "must be at least 1 (instances of the type one physical GPU holds)",
                ));
            }
        }
        for (key, profile) in &self.vgpu_profile {
            let field = format!("vgpu_profile.{key}");
            let share = vgpu::parse(profile.get_ref()).map(|parsed| parsed.share());
            match share {
                Some(VgpuShare::Known { .. }) => {}
                Some(VgpuShare::UnknownBoard) => {
                    return Err(problem(
                        profile,
                        &field,
                        format!(
                            "{:?}: board not in NVIDIA's vGPU type tables nor the model catalogue",
                            profile.get_ref()
                        ),
                    ));
                }
                Some(VgpuShare::TooLarge { parent }) => {
                    return Err(problem(
                        profile,
                        &field,
                        format!(
                            "{:?}: more framebuffer than the {} has ({} GB)",
                            profile.get_ref(),
                            parent.name,
                            parent.memory_gb
                        ),
                    ));
                }
                None => {
                    return Err(problem(
                        profile,
                        &field,
                        format!(
                            "{:?} is not an NVIDIA vGPU type name (<board>-<GB><series> such as A100-10C, or <board>-<slices>-<GB><series> such as A100-3-20C)",
                            profile.get_ref()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn problem<T>(at: &Spanned<T>, field: &str, message: impl Into<String>) -> Problem {
    let span = at.span();
    Problem {
        span: (span.end > 0).then_some(span),
        field: field.to_owned(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }

    #[test]
    fn defaults_read_every_convention_and_the_vo_property() {
        let file: File = toml::from_str("[[openstack]]\nid = \"cloud\"\n").unwrap();
        let config = &file.openstack[0];
        assert_eq!(config.vo_property, "VO");
        assert_eq!(config.conventions.get_ref().len(), 5);
        assert_eq!(config.conventions.get_ref()[0], Convention::Egi);
        config.validate().unwrap();
    }

    #[test]
    fn a_repeated_convention_is_refused_at_its_value() {
        let source = "[[openstack]]\nid = \"cloud\"\nconventions = [\"vgpu\", \"egi\", \"vgpu\"]\n";
        let file: File = toml::from_str(source).unwrap();
        let problem = file.openstack[0].validate().unwrap_err();
        assert_eq!(problem.field, "conventions");
        assert!(problem.message.contains("\"vgpu\" is listed twice"));
        assert_eq!(
            &source[problem.span.unwrap()],
            "[\"vgpu\", \"egi\", \"vgpu\"]"
        );
    }

    #[test]
    fn vgpu_profiles_must_be_nvidia_types_and_are_refused_at_their_value() {
        let source = "[[openstack]]\nid = \"cloud\"\n[openstack.vgpu_profile]\nCUSTOM_NVIDIA_471 = \"A100-10C\"\nCUSTOM_NVIDIA_472 = \"A100-3-20C\"\n";
        let file: File = toml::from_str(source).unwrap();
        file.openstack[0].validate().unwrap();
        for (value, says) in [
            ("A100-SXM4-40GB", "is not an NVIDIA vGPU type name"),
            ("Z9-8Q", "board not in NVIDIA's vGPU type tables"),
            (
                "A10-48Q",
                "more framebuffer than the NVIDIA A10 has (24 GB)",
            ),
        ] {
            let source = format!(
                "[[openstack]]\nid = \"cloud\"\n[openstack.vgpu_profile]\n\"host_pci_0000_41_00_0\" = \"{value}\"\n"
            );
            let file: File = toml::from_str(&source).unwrap();
            let problem = file.openstack[0].validate().unwrap_err();
            assert_eq!(problem.field, "vgpu_profile.host_pci_0000_41_00_0");
            assert!(problem.message.contains(says), "{}", problem.message);
            assert_eq!(&source[problem.span.unwrap()], format!("\"{value}\""));
        }
    }

    #[test]
    fn unknown_keys_and_conventions_are_refused() {
        assert!(toml::from_str::<File>("[[openstack]]\nid = \"c\"\npassword = \"x\"\n").is_err());
        assert!(
            toml::from_str::<File>("[[openstack]]\nid = \"c\"\nconventions = [\"cuda\"]\n")
                .is_err()
        );
    }
}
