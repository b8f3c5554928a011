//! Makes sure the Slurm daemons are there: installs the Debian packages on a developer machine,
//! fails with what to install under `CI=true` (a CI image must bring them; never a skip).

use std::path::Path;
use std::process::Command;

use super::HarnessError;

/// Debian 12 packages: slurm-wlm (slurmctld, slurmd, commands), slurmdbd, munge, slurmrestd, and
/// the JWT and MySQL plugins the daemons load.
pub const PACKAGES: &[&str] = &[
    "slurm-wlm",
    "slurmdbd",
    "munge",
    "slurmrestd",
    "slurm-wlm-jwt-plugin",
    "slurm-wlm-mysql-plugin",
    "mariadb-client",
];

const NEEDED: &[&str] = &[
    "/usr/sbin/slurmctld",
    "/usr/sbin/slurmd",
    "/usr/sbin/slurmdbd",
    "/usr/sbin/slurmrestd",
    "/usr/sbin/munged",
    "/usr/bin/sacct",
    "/usr/bin/mysql",
    "/usr/lib/x86_64-linux-gnu/slurm-wlm/auth_jwt.so",
    "/usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so",
];

fn missing() -> Option<&'static str> {
    NEEDED
        .iter()
        .copied()
        .find(|path| !Path::new(path).exists())
}

pub fn ensure_installed() -> Result<(), HarnessError> {
    let Some(path) = missing() else {
        return Ok(());
    };
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        return Err(HarnessError::Missing {
            path: path.to_owned(),
            packages: PACKAGES.join(" "),
        });
    }
    let output = Command::new("apt-get")
        .args([
            "-o",
            "DPkg::Lock::Timeout=300",
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
        ])
        .args(PACKAGES)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output();
    let detail = match output {
        Ok(output) if output.status.success() => match missing() {
            None => return Ok(()),
            Some(still) => format!("apt-get succeeded but {still} is still missing"),
        },
        Ok(output) => format!(
            "apt-get exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(err) => format!("could not run apt-get: {err}"),
    };
    Err(HarnessError::Install {
        path: path.to_owned(),
        detail,
    })
}
