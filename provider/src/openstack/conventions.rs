//! The ways sites write "this flavor has GPUs" into flavor extra specs, one reader each. A reader
//! answers `None` when the flavor does not use its convention, `Some(Err(why))` when it does but
//! the value cannot be read (so the caller warns instead of guessing a count), and the GPU
//! otherwise. Pure; `detect.rs` applies the configured precedence.

use std::collections::BTreeMap;

use accelfed_schemas::gpu::{
    AcceleratorType, GpuCount, GpuModel, GpuSpec, MemoryMb, PciId, Sharing, Virtualization, catalog,
};
use accelfed_schemas::names::Text;

use super::config::{Convention, DeviceConfig};
use super::pci_ids;

mod devices;

use devices::resources;
pub use devices::{class_spec, pci_alias, resource_class, vgpu, vgpu_sharing, vgpu_spec};

/// Extra specs of one flavor.
pub type Specs = BTreeMap<String, String>;

/// The GPUs one instance of a flavor gets.
#[derive(Debug, Clone, PartialEq)]
pub struct FlavorGpu {
    pub spec: GpuSpec,
    /// Per instance; fractional with EGI's `Accelerator:Number = 0.5`.
    pub count: GpuCount,
    /// The convention it was read from.
    pub convention: Convention,
    /// The Placement resource class the GPUs are allocated from, where the flavor says
    /// (`VGPU`, `CUSTOM_PCI_10DE_1DB4`); lets capacity and flavors meet.
    pub resource_class: Option<String>,
    /// EGI's `Accelerator:Version`, published as OtherInfo.
    pub version: Option<String>,
}

impl FlavorGpu {
    /// Physical GPUs one instance holds: `count` x the share of one GPU that `spec.sharing` says
    /// one unit is (DESIGN.md "Physical units"): whole for passthrough, a vGPU of a type (its
    /// `per_gpu` 0 until configuration or Placement says how many one GPU holds, and then counted
    /// whole: never more than it can be), or a fraction written in the flavor
    /// (`Accelerator:Number = 0.5`), physical as written.
    pub fn physical_count(&self) -> GpuCount {
        match self.spec.sharing {
            Sharing::Whole | Sharing::Fraction => self.count,
            _ => GpuCount::new(self.count.get() * self.spec.sharing.physical_share())
                .unwrap_or(self.count),
        }
    }
}

/// What a convention reader answers.
pub type Read = Option<Result<FlavorGpu, String>>;

/// The configured device descriptions the readers consult.
#[derive(Debug, Clone, Default)]
pub struct Devices {
    pub pci_alias: BTreeMap<String, DeviceConfig>,
    pub vgpu_type: BTreeMap<String, DeviceConfig>,
    pub resource_class: BTreeMap<String, DeviceConfig>,
    /// `[openstack.vgpu_profile]`: trait or resource provider name -> NVIDIA vGPU type name.
    pub vgpu_profile: BTreeMap<String, String>,
}

impl Devices {
    /// Whether Placement inventory of `class` is GPUs: `VGPU`, a configured class, the class of a
    /// configured PCI alias, or a `CUSTOM_PCI_` class of a GPU vendor (NVIDIA, AMD). Other PCI
    /// classes (NICs, Intel devices) count only when configured.
    ///
    /// A class described as `type = "Other"` (a NIC, a crypto card) is never GPUs, whatever its
    /// vendor: the site's word wins over the vendor id.
    pub fn is_gpu_class(&self, class: &str) -> bool {
        if class == "VGPU" {
            return true;
        }
        let described = self.resource_class.get(class).or_else(|| {
            self.pci_alias
                .values()
                .find(|device| device.pci_class().as_deref() == Some(class))
        });
        match described {
            Some(device) => is_accelerator(device),
            None => pci_ids::split_class(class)
                .is_some_and(|(vendor, _)| vendor == "10de" || vendor == "1002"),
        }
    }
}

/// Whether a described device is an accelerator accelfed publishes and meters: GPUs, FPGAs and
/// MICs are; `Other` (NICs, other PCI devices a flavor passes through) is not, so it neither makes
/// a flavor an accelerator flavor nor stands beside its GPUs as a second model.
fn is_accelerator(device: &DeviceConfig) -> bool {
    device.kind != AcceleratorType::Other
}

fn text(value: &str, key: &str) -> Result<Text, String> {
    Text::new(value.trim()).map_err(|err| format!("{key}={value:?}: {err}"))
}

/// A model name from extra specs, configuration or the PCI table, in the one vocabulary
/// ([`GpuModel::canonical`]).
fn model(value: &str, key: &str) -> Result<GpuModel, String> {
    GpuModel::canonical(value.trim()).map_err(|err| format!("{key}={value:?}: {err}"))
}

fn count(value: &str, key: &str) -> Result<GpuCount, String> {
    value
        .parse::<GpuCount>()
        .map_err(|err| format!("{key}={value:?} is not a GPU count ({err})"))
}

/// A memory value that is GB when it carries no unit (EGI's `Accelerator:Memory`, `gpu_memory`).
fn memory_gb(value: &str, key: &str) -> Result<MemoryMb, String> {
    let trimmed = value.trim();
    let with_unit = if trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        format!("{trimmed} GB")
    } else {
        trimmed.to_owned()
    };
    MemoryMb::parse(&with_unit).map_err(|err| format!("{key}={value:?}: {err}"))
}

fn kind(value: &str) -> AcceleratorType {
    match value.trim().to_ascii_lowercase().as_str() {
        "gpu" => AcceleratorType::Gpu,
        "fpga" => AcceleratorType::Fpga,
        "mic" => AcceleratorType::Mic,
        _ => AcceleratorType::Other,
    }
}

fn virtualization(value: &str, key: &str) -> Result<Virtualization, String> {
    match value.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "passthrough" | "pci-passthrough" | "pci" | "direct" => Ok(Virtualization::Passthrough),
        "vgpu" | "mdev" | "virtual" => Ok(Virtualization::Vgpu),
        "mig" => Ok(Virtualization::Mig),
        "time-slicing" | "timeslicing" => Ok(Virtualization::TimeSlicing),
        "none" | "" => Ok(Virtualization::None),
        _ => Err(format!(
            "{key}={value:?} is not a known virtualization type"
        )),
    }
}

fn gpu(spec: GpuSpec, count: GpuCount, convention: Convention) -> FlavorGpu {
    FlavorGpu {
        spec,
        count,
        convention,
        resource_class: None,
        version: None,
    }
}

fn from_device(device: &DeviceConfig, default_virtualization: Virtualization) -> GpuSpec {
    let model = GpuModel::canonical(device.model.as_str()).unwrap_or_else(|_| device.model.clone());
    let mut spec = GpuSpec::new(device.vendor.clone(), model);
    spec.kind = device.kind;
    spec.memory = device.memory;
    spec.virtualization = device.virtualization.unwrap_or(default_virtualization);
    spec
}

/// EGI: `Accelerator:Type|Vendor|Model|Number` (cASO needs these four), `Accelerator:Memory` (GB),
/// `Accelerator:VirtualizationType`, `Accelerator:Version`.
pub fn egi(specs: &Specs) -> Read {
    if !specs.keys().any(|key| key.starts_with("Accelerator:")) {
        return None;
    }
    Some((|| {
        let get = |name: &str| specs.get(&format!("Accelerator:{name}"));
        let need = |name: &str| get(name).ok_or_else(|| format!("Accelerator:{name} is missing"));
        let number = count(need("Number")?, "Accelerator:Number")?;
        let mut spec = GpuSpec::new(
            text(need("Vendor")?, "Accelerator:Vendor")?,
            model(need("Model")?, "Accelerator:Model")?,
        );
        spec.kind = get("Type").map_or(AcceleratorType::Gpu, |t| kind(t));
        spec.memory = get("Memory")
            .map(|m| memory_gb(m, "Accelerator:Memory"))
            .transpose()?;
        spec.virtualization = get("VirtualizationType")
            .map(|v| virtualization(v, "Accelerator:VirtualizationType"))
            .transpose()?
            .unwrap_or_else(|| implied_virtualization(specs));
        let mut found = gpu(spec, number, Convention::Egi);
        found.version = get("Version").cloned();
        if !number.is_whole() {
            // `Accelerator:Number = 0.5`: the site wrote the physical share itself.
            found.spec.sharing = Sharing::Fraction;
        }
        Ok(found)
    })())
}

/// The virtualization of a flavor whose EGI keys do not name one: what Nova will allocate says it,
/// vGPU where the flavor requests `resources[N]:VGPU`, else passthrough. Sites commonly add the EGI
/// keys for publishing beside the `resources:VGPU` key that schedules the instance.
fn implied_virtualization(specs: &Specs) -> Virtualization {
    let vgpu = resources(specs).any(|(_, class, amount)| class == "VGPU" && amount.trim() != "0");
    if vgpu {
        Virtualization::Vgpu
    } else {
        Virtualization::Passthrough
    }
}

/// The older `gpu_number`, `gpu_vendor`, `gpu_model`, `gpu_memory` keys.
pub fn legacy(specs: &Specs) -> Read {
    let number = specs.get("gpu_number")?;
    Some((|| {
        let number = count(number, "gpu_number")?;
        let vendor = specs.get("gpu_vendor").map_or("unknown", String::as_str);
        let name = specs
            .get("gpu_model")
            .ok_or_else(|| "gpu_number is set but gpu_model is missing".to_owned())?;
        let mut spec = GpuSpec::new(text(vendor, "gpu_vendor")?, model(name, "gpu_model")?);
        spec.memory = specs
            .get("gpu_memory")
            .map(|m| memory_gb(m, "gpu_memory"))
            .transpose()?;
        spec.virtualization = Virtualization::Passthrough;
        Ok(gpu(spec, number, Convention::Legacy))
    })())
}
