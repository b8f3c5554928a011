//! A stub `libnvidia-ml.so.1` for the node agent's tests: `nvml-stub/nvml_stub.c` (its header
//! comment describes the machine it answers for), `nvml_stub_instances.c` (MIG, vGPU, GPM) and
//! their `nvml_stub.h`, compiled with the machine's `cc` into a folder of the test's, so no binary
//! is committed and no NVIDIA driver is needed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The C sources, kept beside the kit so every crate's tests build the same stub.
const SOURCES: [(&str, &str); 3] = [
    ("nvml_stub.h", include_str!("../nvml-stub/nvml_stub.h")),
    ("nvml_stub.c", include_str!("../nvml-stub/nvml_stub.c")),
    (
        "nvml_stub_instances.c",
        include_str!("../nvml-stub/nvml_stub_instances.c"),
    ),
];

/// The UUIDs the stub's first four GPUs answer with (templates 0 to 3 of the source).
pub const IDLE_ALLOCATED_H200: &str = "GPU-f056ed22-e9af-22b3-c6b1-ca31bc2d9cc7";
pub const BUSY_H200: &str = "GPU-f056ed22-e9af-22b3-c6b1-ca31bc2d9c01";
pub const MIG_H100: &str = "GPU-a824b919-34d1-dc6b-8ef9-f78132547b23";
pub const VGPU_H100: &str = "GPU-a079082a-f22a-79c0-5dd1-1d0d1c202a9c";
/// Power (mW) the stub's templates draw, in template order: the energy counter rises at this rate.
pub const POWER_MW: [u64; 4] = [122_090, 691_870, 180_000, 250_000];
/// The processes of the stub's GPUs: (pid, GPU template) for the idle holder of GPU 0, the idle
/// holder and the busy process of GPU 1, and the two MIG holders of GPU 2.
pub const IDLE_HOLDER_PID: u32 = 473;
pub const SHARED_IDLE_PID: u32 = 4730;
pub const BUSY_PID: u32 = 5040;
pub const MIG_BUSY_PID: u32 = 6001;
pub const MIG_IDLE_PID: u32 = 6002;
/// The VMs (libvirt domain UUIDs) of the stub's vGPU host.
pub const VGPU_VMS: [&str; 2] = [
    "6f1c9f7e-52a4-4b8e-9d3c-2a7b8c9d0e1f",
    "0b2d4f6a-8c1e-4a3b-9c5d-7e9f1a3b5c7d",
];

/// Compiles the stub into `dir/libnvidia-ml.so.1` and returns that path.
pub fn build(dir: &Path) -> Result<PathBuf, String> {
    for (name, text) in SOURCES {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    let library = dir.join("libnvidia-ml.so.1");
    let output = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o",
        ])
        .arg(&library)
        .arg(dir.join("nvml_stub.c"))
        .arg(dir.join("nvml_stub_instances.c"))
        .output()
        .map_err(|e| format!("running cc for the NVML stub: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cc failed on the NVML stub: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(library)
}

/// Writes a fake `/proc` under `root`: `root/<pid>/cgroup` for each (pid, cgroup file text).
pub fn write_cgroups(root: &Path, entries: &[(u32, &str)]) -> Result<(), String> {
    for (pid, text) in entries {
        let dir = root.join(pid.to_string());
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        std::fs::write(dir.join("cgroup"), text)
            .map_err(|e| format!("writing {pid}/cgroup: {e}"))?;
    }
    Ok(())
}

/// The fake `/proc` of the stub's processes, with the cgroup lines of the real layouts: Slurm's
/// cgroup v2 (slurmstepd's scope) and v1 (`/slurm/uid_/job_/`), a Kubernetes pod under systemd
/// naming (cgroup v2) and under cgroupfs naming (cgroup v1), and a plain login process.
pub const STUB_CGROUPS: [(u32, &str); 5] = [
    (
        IDLE_HOLDER_PID,
        "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n",
    ),
    (
        SHARED_IDLE_PID,
        "12:devices:/slurm/uid_1000/job_4243/step_batch\n11:memory:/slurm/uid_1000/job_4243/step_batch\n",
    ),
    (
        BUSY_PID,
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/cri-containerd-3f2a.scope\n",
    ),
    (
        MIG_BUSY_PID,
        "11:memory:/kubepods/besteffort/pod7c6b5a49-3827-1605-f4e3-d2c1b0a99887/4d1e2f\n",
    ),
    (
        MIG_IDLE_PID,
        "0::/user.slice/user-1000.slice/session-3.scope\n",
    ),
];
