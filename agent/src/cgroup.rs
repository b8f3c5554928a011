//! Process -> holder, from `/proc/<pid>/cgroup`.
//!
//! The layouts read (cgroup v1 lines `N:controllers:/path`, v2 the one line `0::/path`):
//! * Slurm: `/slurm/uid_<uid>/job_<id>/step_<n>` (v1) and
//!   `/system.slice/slurmstepd.scope/job_<id>/step_<n>/...` (v2): the component `job_<digits>`,
//!   the job's own id (sacct's JobIDRaw): for an array task (`1230_4`) or a heterogeneous
//!   component (`1240+1`) not the printed one; the meter matches both (`holders_of`);
//! * Kubernetes, cgroupfs driver: `/kubepods/<qos>/pod<uid>/<container>`;
//!   systemd driver: `/kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid with _>.slice/...`
//!   (the UID's dashes become underscores in systemd unit names).
//!
//! A process in neither is its own holder; one whose cgroup file cannot be read (it ended, or
//! another PID namespace) too.

use std::path::Path;

use crate::holder::Holder;

/// The holder of `pid`, from `<proc_root>/<pid>/cgroup`.
pub fn holder_of(proc_root: &Path, pid: u32) -> Holder {
    let path = proc_root.join(pid.to_string()).join("cgroup");
    match std::fs::read_to_string(&path) {
        Ok(text) => holder_in(&text).unwrap_or(Holder::Process(pid)),
        Err(error) => {
            tracing::debug!(path = %path.display(), %error, "no cgroup for a GPU process; counted as the process");
            Holder::Process(pid)
        }
    }
}

/// The job or pod a cgroup file's lines name, if any.
pub fn holder_in(cgroup_file: &str) -> Option<Holder> {
    cgroup_file.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        path.split('/').find_map(component_holder)
    })
}

fn component_holder(component: &str) -> Option<Holder> {
    if let Some(id) = component.strip_prefix("job_")
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(Holder::SlurmJob(id.to_owned()));
    }
    let unit = component.strip_suffix(".slice").unwrap_or(component);
    let (_, after) = unit.rsplit_once("pod")?;
    let uid = after.replace('_', "-");
    is_uuid(&uid).then(|| Holder::KubernetesPod(uid.to_ascii_lowercase()))
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_v1_and_v2() {
        assert_eq!(
            holder_in("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n"),
            Some(Holder::SlurmJob("4242".into()))
        );
        assert_eq!(
            holder_in("12:devices:/slurm/uid_1000/job_17/step_batch\n"),
            Some(Holder::SlurmJob("17".into()))
        );
        assert_eq!(holder_in("0::/system.slice/job_x/\n"), None);
    }

    #[test]
    fn pods_cgroupfs_and_systemd() {
        let uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
        let systemd = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/cri-containerd-3f.scope";
        assert_eq!(holder_in(systemd), Some(Holder::KubernetesPod(uid.into())));
        let guaranteed =
            "0::/kubepods.slice/kubepods-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/x";
        assert_eq!(
            holder_in(guaranteed),
            Some(Holder::KubernetesPod(uid.into()))
        );
        let cgroupfs = format!("11:memory:/kubepods/besteffort/pod{uid}/4d1e\n");
        assert_eq!(
            holder_in(&cgroupfs),
            Some(Holder::KubernetesPod(uid.into()))
        );
        assert_eq!(
            holder_in("0::/user.slice/user-1000.slice/session-3.scope"),
            None
        );
    }

    #[test]
    fn an_unreadable_cgroup_is_the_process() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(holder_of(dir.path(), 99), Holder::Process(99));
    }
}
