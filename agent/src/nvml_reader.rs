//! Reading the node's GPUs through NVML (`nvml-wrapper`), one period at a time.
//!
//! Per GPU: identity (UUID, name -> canonical model, memory, MIG mode and instances, vGPU
//! instances), utilisation, memory used, power, the energy counter; per holder its SM activity in
//! the window since the last reading:
//! * whole GPUs: the process utilisation samples since the last reading's timestamp
//!   (`nvmlDeviceGetProcessUtilization`); NVML lists only processes that ran kernels, so a holder
//!   missing from them was idle, and NOT_FOUND means nobody ran anything;
//! * MIG instances: GPM's SM activity between this reading's sample of the GPU instance and the
//!   last one (`nvmlGpmMigSampleGet`, Hopper and newer); none on older GPUs or the first window;
//! * vGPU instances: the GPU's utilisation when one vGPU holds the GPU; otherwise no source tells.
//!
//! The `Nvml` handle lives as long as the process (it is leaked once): GPM samples borrow it
//! from one period to the next.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::PathBuf;

use nvml_wrapper::enum_wrappers::vgpu::VmId;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, GpmSample, Nvml};

use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::holder::Holder;
use crate::reading::{GpuIdentity, GpuReading, Holding, MigInstance, VgpuInstance};

pub struct NvmlReader {
    nvml: &'static Nvml,
    proc_root: PathBuf,
    /// Per GPU index: the newest process sample timestamp seen (microseconds), the next window's start.
    last_process_sample: HashMap<u32, u64>,
    /// Per (GPU index, GPU instance id): the last GPM sample, the next window's start.
    last_gpm: HashMap<(u32, u32), GpmSample<'static>>,
}

impl std::fmt::Debug for NvmlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvmlReader")
            .field("proc_root", &self.proc_root)
            .finish_non_exhaustive()
    }
}

impl NvmlReader {
    /// Loads the library and checks that the driver runs and shows at least one GPU.
    pub fn open(config: &AgentConfig) -> Result<Self, AgentError> {
        let library = config.library_name();
        let nvml = Nvml::builder()
            .lib_path(
                config
                    .library
                    .as_deref()
                    .map_or(OsStr::new(crate::config::DEFAULT_LIBRARY), |p| {
                        p.as_os_str()
                    }),
            )
            .init()
            .map_err(|error| match error {
                NvmlError::LibloadingError(_) | NvmlError::FailedToLoadSymbol(_) => {
                    AgentError::LibraryMissing {
                        library: library.clone(),
                        detail: error.to_string(),
                    }
                }
                NvmlError::DriverNotLoaded | NvmlError::NoPermission | NvmlError::Unknown => {
                    AgentError::DriverNotLoaded {
                        library: library.clone(),
                        detail: error.to_string(),
                    }
                }
                other => AgentError::nvml("nvmlInit_v2", other),
            })?;
        let count = nvml
            .device_count()
            .map_err(|e| AgentError::nvml("nvmlDeviceGetCount_v2", e))?;
        if count == 0 {
            return Err(AgentError::NoGpu { library });
        }
        Ok(Self {
            nvml: Box::leak(Box::new(nvml)),
            proc_root: config.proc_root.clone(),
            last_process_sample: HashMap::new(),
            last_gpm: HashMap::new(),
        })
    }

    /// Every GPU's readings now. A GPU that cannot be read is skipped with a warning; the others
    /// are still read.
    pub fn read(&mut self) -> Result<Vec<GpuReading>, AgentError> {
        let nvml = self.nvml;
        let count = nvml
            .device_count()
            .map_err(|e| AgentError::nvml("nvmlDeviceGetCount_v2", e))?;
        let mut readings = Vec::with_capacity(count as usize);
        for index in 0..count {
            match nvml
                .device_by_index(index)
                .map_err(|e| AgentError::nvml("nvmlDeviceGetHandleByIndex_v2", e))
            {
                Ok(device) => match self.read_gpu(index, &device) {
                    Ok(reading) => readings.push(reading),
                    Err(error) => tracing::warn!(index, %error, "GPU skipped this period"),
                },
                Err(error) => tracing::warn!(index, %error, "GPU skipped this period"),
            }
        }
        Ok(readings)
    }

    fn read_gpu(&mut self, index: u32, device: &Device<'static>) -> Result<GpuReading, AgentError> {
        let uuid = device
            .uuid()
            .map_err(|e| AgentError::nvml("nvmlDeviceGetUUID", e))?;
        let name = device
            .name()
            .map_err(|e| AgentError::nvml("nvmlDeviceGetName", e))?;
        let mig_mode = optional(device.mig_mode()).map(|mode| mode.current == 1);
        let utilisation_percent = optional(device.utilization_rates()).map(|u| u.gpu);
        let memory = optional(device.memory_info());
        let mut identity = GpuIdentity {
            uuid: uuid.clone(),
            index,
            model: canonical_model(&name),
            name,
            memory_total_bytes: memory.as_ref().map(|m| m.total),
            mig_mode,
            mig_instances: Vec::new(),
            vgpu_instances: Vec::new(),
        };
        let mut holdings = Vec::new();
        if mig_mode == Some(true) {
            self.read_mig(index, device, &mut identity, &mut holdings);
        } else {
            holdings.extend(self.whole_gpu_holdings(index, device, &uuid));
            // No process samples (older GPUs answer NOT_SUPPORTED): where one holder has the GPU,
            // the GPU's utilisation is its activity; with several, nothing tells.
            let sole_holder = holdings
                .windows(2)
                .all(|pair| pair[0].holder == pair[1].holder);
            if sole_holder {
                for holding in holdings
                    .iter_mut()
                    .filter(|h| h.highest_sm_percent.is_none())
                {
                    holding.highest_sm_percent = utilisation_percent.map(f64::from);
                }
            }
        }
        let vgpus = self.vgpu_instances(device);
        let sole_vgpu_activity = (vgpus.len() == 1)
            .then(|| utilisation_percent.map(f64::from))
            .flatten();
        for vgpu in &vgpus {
            holdings.push(Holding {
                holder: vgpu.vm.clone(),
                place: vgpu.uuid.clone(),
                pids: Vec::new(),
                highest_sm_percent: sole_vgpu_activity,
                memory_bytes: None,
            });
        }
        identity.vgpu_instances = vgpus;
        let energy_mj = optional(device.total_energy_consumption());
        Ok(GpuReading {
            read_at_ms: crate::run::now_ms(),
            identity,
            utilisation_percent,
            memory_used_bytes: memory.map(|m| m.used),
            power_mw: optional(device.power_usage()),
            energy_mj,
            holdings,
        })
    }

    /// The holders of a whole GPU: its compute and graphics processes, with their SM activity.
    fn whole_gpu_holdings(
        &mut self,
        index: u32,
        device: &Device<'static>,
        uuid: &str,
    ) -> Vec<Holding> {
        let processes = processes_of(device);
        if processes.is_empty() {
            return Vec::new();
        }
        let since = self.last_process_sample.get(&index).copied();
        let samples = match device.process_utilization_stats(since) {
            Ok(samples) => Some(samples),
            // No process ran a kernel since `since`: every holder was idle.
            Err(NvmlError::NotFound) => Some(Vec::new()),
            Err(error) => {
                tracing::debug!(index, %error, "no process utilisation samples; activity unknown");
                None
            }
        };
        if let Some(newest) = samples
            .as_ref()
            .and_then(|s| s.iter().map(|s| s.timestamp).max())
        {
            self.last_process_sample.insert(index, newest);
        }
        // The first reading has no window behind it: NVML answers with its whole buffer, which
        // may reach before the holder did; it still tells whether the holder is busy now.
        processes
            .into_iter()
            .map(|(pid, memory)| {
                let highest = samples.as_ref().map(|samples| {
                    samples
                        .iter()
                        .filter(|s| s.pid == pid)
                        .map(|s| f64::from(s.sm_util))
                        .fold(0.0, f64::max)
                });
                Holding {
                    holder: crate::cgroup::holder_of(&self.proc_root, pid),
                    place: uuid.to_owned(),
                    pids: vec![pid],
                    highest_sm_percent: highest,
                    memory_bytes: memory,
                }
            })
            .collect()
    }

    /// MIG instances (MIG device handles), their processes and, through GPM, their activity.
    fn read_mig(
        &mut self,
        index: u32,
        device: &Device<'static>,
        identity: &mut GpuIdentity,
        holdings: &mut Vec<Holding>,
    ) {
        let slots = optional(device.mig_device_count()).unwrap_or(0);
        for slot in 0..slots {
            let Ok(mig) = device.mig_device_by_index(slot) else {
                continue;
            };
            let Ok(mig_uuid) = mig.uuid() else { continue };
            let processes = processes_with_instance(&mig);
            let gpu_instance_id = processes.iter().find_map(|p| p.2);
            let activity = gpu_instance_id.and_then(|gi| self.gpm_activity(index, device, gi));
            for (pid, memory, _) in &processes {
                holdings.push(Holding {
                    holder: crate::cgroup::holder_of(&self.proc_root, *pid),
                    place: mig_uuid.clone(),
                    pids: vec![*pid],
                    highest_sm_percent: activity,
                    memory_bytes: *memory,
                });
            }
            identity.mig_instances.push(MigInstance {
                name: mig.name().unwrap_or_default(),
                uuid: mig_uuid,
                gpu_instance_id,
                memory_total_bytes: optional(mig.memory_info()).map(|m| m.total),
                sm_activity_percent: activity,
            });
        }
    }

    /// GPM's SM activity of a GPU instance since the last sample; the first call only samples.
    fn gpm_activity(
        &mut self,
        index: u32,
        device: &Device<'static>,
        gpu_instance_id: u32,
    ) -> Option<f64> {
        let sample = device.gpm_mig_sample(gpu_instance_id).ok()?;
        let previous = self.last_gpm.insert((index, gpu_instance_id), sample)?;
        let current = self.last_gpm.get(&(index, gpu_instance_id))?;
        let results = nvml_wrapper::gpm::gpm_metrics_get(
            self.nvml,
            &previous,
            current,
            &[GpmMetricId::SmUtil],
        )
        .ok()?;
        results.into_iter().next()?.ok().map(|metric| metric.value)
    }

    fn vgpu_instances(&self, device: &Device<'static>) -> Vec<VgpuInstance> {
        let Some(instances) = optional(device.active_vgpus()) else {
            return Vec::new();
        };
        instances
            .iter()
            .filter_map(|instance| {
                let vm = match instance.vm_id() {
                    Ok(VmId::Uuid(uuid)) => Holder::Vm(uuid.to_ascii_lowercase()),
                    Ok(VmId::Domain(id)) => Holder::VmDomain(id),
                    Err(error) => {
                        tracing::warn!(%error, "a vGPU instance without its VM id is skipped");
                        return None;
                    }
                };
                Some(VgpuInstance {
                    uuid: instance.uuid().unwrap_or_default(),
                    vm,
                })
            })
            .collect()
    }
}

/// A value NVML may not give (NOT_SUPPORTED on this GPU, or not now): `None`, logged at debug.
fn optional<T>(result: Result<T, NvmlError>) -> Option<T> {
    result
        .map_err(|error| tracing::debug!(%error, "NVML value not available"))
        .ok()
}

fn memory_of(used: &UsedGpuMemory) -> Option<u64> {
    match used {
        UsedGpuMemory::Used(bytes) => Some(*bytes),
        UsedGpuMemory::Unavailable => None,
    }
}

/// Compute and graphics processes (pid, memory), each pid once.
fn processes_of(device: &Device<'static>) -> Vec<(u32, Option<u64>)> {
    processes_with_instance(device)
        .into_iter()
        .map(|(pid, memory, _)| (pid, memory))
        .collect()
}

fn processes_with_instance(device: &Device<'static>) -> Vec<(u32, Option<u64>, Option<u32>)> {
    let mut all: Vec<(u32, Option<u64>, Option<u32>)> = Vec::new();
    for list in [
        device.running_compute_processes(),
        device.running_graphics_processes(),
    ] {
        for process in optional(list).unwrap_or_default() {
            if !all.iter().any(|(pid, _, _)| *pid == process.pid) {
                all.push((
                    process.pid,
                    memory_of(&process.used_gpu_memory),
                    process.gpu_instance_id,
                ));
            }
        }
    }
    all
}

/// The project's canonical name for what NVML calls the GPU (schemas' catalogue).
pub fn canonical_model(name: &str) -> String {
    accelfed_schemas::gpu::GpuModel::canonical(name)
        .map_or_else(|_| name.trim().to_owned(), |m| m.as_str().to_owned())
}
