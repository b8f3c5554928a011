//! Installing the Debian packages a real component under test needs, on a developer machine (the
//! harnesses of [`crate::slapd`] and [`crate::slurm`], the web page test's Chromium; under
//! `CI=true` they fail with what is missing instead, since a CI image must bring them).

use std::process::Command;

/// `apt-get install` of `packages` (waiting up to 5 minutes for dpkg's lock), then `missing()`
/// again: `Err` says why the component is still not there.
pub fn install(packages: &[&str], missing: impl Fn() -> Option<String>) -> Result<(), String> {
    let output = Command::new("apt-get")
        .args([
            "-o",
            "DPkg::Lock::Timeout=300",
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
        ])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output();
    match output {
        Ok(output) if output.status.success() => match missing() {
            None => Ok(()),
            Some(still) => Err(format!("apt-get succeeded but {still} is still missing")),
        },
        Ok(output) => Err(format!(
            "apt-get exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )),
        Err(err) => Err(format!("could not run apt-get: {err}")),
    }
}
