//! `type = "static"`: services described entirely in the configuration file, for bare-metal GPU nodes
//! or middleware accelfed does not query yet. Counts of used and unavailable GPUs are whatever the
//! file says; keep it updated from the site's own tooling.

use serde::Deserialize;
use toml::Spanned;

use accelfed_schemas::glue::OsFamily;
use accelfed_schemas::gpu::{
    AcceleratorType, GpuCount, GpuModel, MemoryMb, Sharing, Virtualization,
};
use accelfed_schemas::names::{Fqan, LocalId, Text, VoName};

/// A static provider: batch systems and clouds.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticConfig {
    /// Batch or HPC systems (GLUE2 ComputingService).
    #[serde(default)]
    pub batch: Vec<BatchConfig>,
    /// IaaS clouds (GLUE 2.1 CloudComputingService).
    #[serde(default)]
    pub cloud: Vec<CloudConfig>,
}

/// A batch system.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchConfig {
    /// Unique among the site's services; part of every GLUE2 ID beneath it.
    pub id: Spanned<LocalId>,
    /// Human-readable name.
    pub name: Option<Text>,
    /// The batch system: `SLURM`, `PBSPro`, `HTCondor`...
    pub manager: Text,
    /// Its version.
    pub manager_version: Option<Text>,
    /// `production`, `pre-production`, `testing` or `development`.
    #[serde(default = "production")]
    pub quality_level: Text,
    /// How users reach it.
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<EndpointConfig>,
    /// Kinds of node (GLUE2 ExecutionEnvironment).
    #[serde(rename = "node_type")]
    pub node_types: Vec<NodeTypeConfig>,
    /// Partitions or queues (GLUE2 ComputingShare).
    #[serde(default, rename = "share")]
    pub shares: Vec<BatchShareConfig>,
}

/// How users reach a service (GLUE2 Endpoint).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// Unique within the service.
    pub id: LocalId,
    /// The endpoint's URL.
    pub url: Text,
    /// The interface it speaks: `org.openstack.nova`, `org.ogf.bes`, `slurm`...
    pub interface: Text,
    /// The interface's version.
    pub interface_version: Option<Text>,
    /// The software behind it and its version.
    pub implementation: Option<Text>,
    pub implementation_version: Option<Text>,
    /// `webservice`, `corba`, `rmi`...
    #[serde(default = "webservice")]
    pub technology: Text,
    /// `production`, `pre-production`, `testing` or `development`.
    #[serde(default = "production")]
    pub quality_level: Text,
    /// `ok`, `warning`, `critical`, `unknown` or `other`.
    #[serde(default = "ok")]
    pub health: Text,
    /// GLUE2 capabilities, e.g. `executionmanagement.jobexecution`.
    #[serde(default)]
    pub capabilities: Vec<Text>,
    /// VOs admitted (AccessPolicy); default: every VO of the service's shares.
    pub vos: Option<Vec<VoConfig>>,
}

/// A kind of node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeTypeConfig {
    /// Unique within the service; shares refer to it.
    pub id: Spanned<LocalId>,
    /// Human-readable name.
    pub name: Option<Text>,
    /// How many nodes of this kind exist.
    pub count: u32,
    /// How many of them run jobs now.
    #[serde(default)]
    pub busy: u32,
    /// How many of them are down, drained or otherwise unable to take jobs.
    #[serde(default)]
    pub unavailable: u32,
    /// CPU sockets per node.
    pub sockets: Option<u32>,
    /// Logical CPUs (hardware threads) per node.
    pub cpus: Option<u32>,
    /// Memory per node: a number of MB, or `"512 GB"`, `"480 GiB"`.
    pub memory: Option<MemoryMb>,
    /// `amd64`, `aarch64`, `ppc64le`.
    #[serde(default = "amd64")]
    pub platform: Text,
    /// Operating system.
    #[serde(default)]
    pub os: OsConfig,
    /// The accelerators each node carries, one entry per kind.
    #[serde(default, rename = "gpu")]
    pub gpus: Vec<GpuConfig>,
}

/// An operating system.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsConfig {
    /// GLUE2's OSFamily: `linux`, `macosx`, `windows`, `solaris` (another value is refused at
    /// its line and column).
    #[serde(default = "linux")]
    pub family: OsFamily,
    /// `RockyLinux`, `Ubuntu`...
    pub name: Option<Text>,
    pub version: Option<Text>,
}

impl Default for OsConfig {
    fn default() -> Self {
        Self {
            family: linux(),
            name: None,
            version: None,
        }
    }
}

/// GPUs of one kind: on each node of a node type (`[[...node_type.gpu]]`, with `count`) or in a
/// cloud's pool (`[[...gpu_pool]]`, with `total`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// Unique within the node type or cloud; flavors refer to pools by it.
    pub id: Spanned<LocalId>,
    /// `GPU` (default), `FPGA`, `MIC` or `Other`.
    #[serde(default, rename = "type")]
    pub kind: AcceleratorType,
    /// `NVIDIA`, `AMD`, `Intel`.
    pub vendor: Text,
    /// The model as the device names itself (`nvidia-smi --query-gpu=name`), e.g. `NVIDIA A100-SXM4-80GB`.
    pub model: GpuModel,
    /// Device memory (of a MIG slice: the slice's): a number of MB, or `"80 GB"`, `"81559 MiB"`.
    pub memory: Option<MemoryMb>,
    /// CUDA compute capability (`8.0`) or the vendor's equivalent.
    pub compute_capability: Option<Text>,
    /// `none` (bare metal, default), `passthrough`, `vgpu`, `mig` or `time-slicing`.
    #[serde(default)]
    pub virtualization: Virtualization,
    /// The MIG profile of the slices, e.g. `3g.40gb`; needs `virtualization = "mig"`.
    pub mig_profile: Option<Text>,
    pub driver_version: Option<Text>,
    pub cuda_version: Option<Text>,
    /// Clock speed in MHz.
    pub clock_speed: Option<u32>,
    /// What one slot (node GPUs) or one device (pools) is of a physical GPU, so the document
    /// publishes physical GPUs beside slots: `{ mode = "mig", profile = "1g.10gb", slices = 1,
    /// of = 7 }`, `{ mode = "time-slicing", replicas = 4 }`, `{ mode = "mps", replicas = 4 }`,
    /// `{ mode = "vgpu", vgpu_type = "GRID A100-10C", per_gpu = 4 }`. Default: whole GPUs.
    pub sharing: Option<Sharing>,
    /// Node GPUs: physical devices per node.
    pub count: Option<Spanned<GpuCount>>,
    /// Node GPUs: schedulable devices per node (MIG slices, time-slicing replicas). Default: `count`.
    pub slices: Option<Spanned<GpuCount>>,
    /// Pools: devices (or vGPUs) that exist.
    pub total: Option<Spanned<GpuCount>>,
    /// Devices in use now (node GPUs: over all nodes of the type, in slices).
    pub used: Option<Spanned<GpuCount>>,
    /// Pools: devices on disabled or failed hosts. (Node GPUs: use the node type's `unavailable`.)
    pub unavailable: Option<Spanned<GpuCount>>,
}

/// A partition or queue.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchShareConfig {
    /// Unique within the service.
    pub id: Spanned<LocalId>,
    /// Human-readable name.
    pub name: Option<Text>,
    /// The partition or queue name jobs are submitted to (default: the id).
    pub queue: Option<Text>,
    /// Who may use it: VO names, or tables `{ vo = "atlas", fqan = "/atlas/Role=production" }`.
    pub vos: Vec<VoConfig>,
    /// Node type ids the partition runs on.
    pub node_types: Vec<Spanned<LocalId>>,
    /// The most GPUs one job may request.
    pub max_gpus_per_job: Option<GpuCount>,
    /// The longest a job may run, in seconds.
    pub max_wall_time: Option<u64>,
    /// `production`, `draining`, `queueing` or `closed`.
    #[serde(default = "production")]
    pub serving_state: Text,
}

/// A VO: a bare name (`"atlas"`), or a table with the FQAN its members present
/// (`{ vo = "atlas", fqan = "/atlas/Role=production" }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoConfig {
    pub vo: VoName,
    pub fqan: Option<Fqan>,
}

impl<'de> Deserialize<'de> for VoConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The table form; a separate type so unknown keys are refused with their names.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            vo: VoName,
            fqan: Option<Fqan>,
        }

        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = VoConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a VO name or a table { vo = \"...\", fqan = \"/...\" }")
            }
            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<VoConfig, E> {
                let vo = VoName::new(value).map_err(E::custom)?;
                Ok(VoConfig { vo, fqan: None })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<VoConfig, A::Error> {
                let table = Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(VoConfig {
                    vo: table.vo,
                    fqan: table.fqan,
                })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// An IaaS cloud.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloudConfig {
    /// Unique among the site's services.
    pub id: Spanned<LocalId>,
    /// Human-readable name.
    pub name: Option<Text>,
    /// `OpenStack`, `OpenNebula`.
    pub manager: Text,
    pub manager_version: Option<Text>,
    /// `KVM`, `Xen`.
    pub hypervisor: Option<Text>,
    /// CPUs and memory the cloud has in all.
    pub total_cpus: Option<u32>,
    pub total_ram: Option<MemoryMb>,
    /// `production`, `pre-production`, `testing` or `development`.
    #[serde(default = "production")]
    pub quality_level: Text,
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<EndpointConfig>,
    /// Pools of physical GPUs (CloudComputingManagerAccelerator), which flavors draw from.
    #[serde(default, rename = "gpu_pool")]
    pub gpu_pools: Vec<GpuConfig>,
    /// Projects, one per VO (GLUE2 Share).
    #[serde(rename = "project")]
    pub projects: Vec<ProjectConfig>,
    /// Flavors (CloudComputingInstanceType).
    #[serde(default, rename = "flavor")]
    pub flavors: Vec<FlavorConfig>,
    /// Images (CloudComputingImage).
    #[serde(default, rename = "image")]
    pub images: Vec<ImageConfig>,
}

/// A project of a VO.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// Unique within the cloud; flavors and images refer to it.
    pub id: Spanned<LocalId>,
    /// The VO the project serves.
    pub vo: VoName,
    /// The FQAN its members present.
    pub fqan: Option<Fqan>,
    /// The cloud's project id.
    pub project_id: Option<Text>,
    /// Quota: VMs, and GPUs.
    pub max_vm: Option<u32>,
    pub max_gpus: Option<GpuCount>,
    /// VMs running now.
    pub running_vm: Option<u32>,
    /// GPUs the project uses now, per pool id.
    #[serde(default)]
    pub used_gpus: std::collections::BTreeMap<String, GpuCount>,
}

/// A flavor.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlavorConfig {
    /// The cloud's flavor id.
    pub id: Spanned<LocalId>,
    /// The flavor name users see.
    pub name: Text,
    pub cpus: u32,
    /// A number of MB, or `"128 GB"`.
    pub ram: MemoryMb,
    /// Root disk in GB.
    #[serde(default)]
    pub disk: u32,
    #[serde(default = "amd64")]
    pub platform: Text,
    /// GLUE2's OSFamily of the VMs it runs (`linux`, `macosx`, `windows`, `solaris`), for when
    /// the images do not say; published as the instance type's OSFamily.
    pub os_family: Option<OsFamily>,
    /// The GPU pool this flavor's GPUs come from.
    pub gpu_pool: Option<Spanned<LocalId>>,
    /// GPUs per VM (fractions allowed: 0.5 for half a time-sliced card).
    pub gpus: Option<Spanned<GpuCount>>,
    /// Project ids allowed to use it; default: every project.
    pub projects: Option<Vec<Spanned<LocalId>>>,
}

/// An image.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageConfig {
    pub id: Spanned<LocalId>,
    pub name: Text,
    pub os_name: Option<Text>,
    pub os_version: Option<Text>,
    #[serde(default = "amd64")]
    pub platform: Text,
    /// The image's entry in a marketplace (AppDB / EGI's registry).
    pub marketplace_url: Option<Text>,
    pub description: Option<Text>,
    /// GPU driver and CUDA versions installed in the image.
    pub gpu_driver_version: Option<Text>,
    pub cuda_version: Option<Text>,
    /// Project ids allowed to use it; default: every project.
    pub projects: Option<Vec<Spanned<LocalId>>>,
}

fn text(value: &'static str) -> Text {
    Text::literal(value)
}

fn production() -> Text {
    text("production")
}
fn webservice() -> Text {
    text("webservice")
}
fn ok() -> Text {
    text("ok")
}
fn amd64() -> Text {
    text("amd64")
}
fn linux() -> OsFamily {
    OsFamily::Linux
}
