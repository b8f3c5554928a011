//! Makes sure the Slurm daemons are there: installs the Debian packages on a developer machine,
//! fails with what to install under `CI=true` (a CI image must bring them; never a skip).

use std::path::Path;

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
    crate::apt::install(PACKAGES, || missing().map(str::to_owned)).map_err(|detail| {
        HarnessError::Install {
            path: path.to_owned(),
            detail,
        }
    })
}
