//! A real OpenStack for end-to-end tests, started and stopped by `scripts/openstack/cloud.sh`
//! (Keystone, Glance, Placement, Neutron server, Nova API / conductor / scheduler, two nova-compute
//! with a fake GPU driver; MariaDB databases `accelfed_os_*`, RabbitMQ vhost `accelfed_os`).
//! [`Cloud::start`] installs the Debian packages when missing and waits until Placement holds the
//! computes' GPU providers; dropping the [`Cloud`] stops it and drops its databases. A cloud that
//! cannot start is an error carrying the tail of its logs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The admin password of the test cloud (a throwaway on 127.0.0.1).
pub const PASSWORD: &str = "accelfed-test";

/// A running test cloud.
#[derive(Debug)]
pub struct Cloud {
    dir: tempfile::TempDir,
    port: u16,
}

/// Why the cloud did not start or a helper failed, with the logs that tell.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {detail}")]
pub struct CloudError {
    what: String,
    detail: String,
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/openstack")
        .join(name)
}

impl Cloud {
    /// Installs (if needed), configures and starts the cloud on ports `port..port+4`.
    pub fn start(port: u16) -> Result<Cloud, CloudError> {
        let run = |args: &[&str]| {
            Command::new(script("cloud.sh"))
                .args(args)
                .env("ACCELFED_OS_PORT", port.to_string())
                .output()
        };
        let install = run(&["install"]).map_err(|err| CloudError {
            what: "cloud.sh install".into(),
            detail: err.to_string(),
        })?;
        if !install.status.success() {
            return Err(CloudError {
                what: "cloud.sh install".into(),
                detail: String::from_utf8_lossy(&install.stderr).into_owned(),
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("accelfed-openstack")
            .tempdir()
            .map_err(|err| CloudError {
                what: "temp dir".into(),
                detail: err.to_string(),
            })?;
        let cloud = Cloud { dir, port };
        let dir = cloud.dir.path().to_string_lossy().into_owned();
        let up = run(&["up", &dir]).map_err(|err| CloudError {
            what: "cloud.sh up".into(),
            detail: err.to_string(),
        })?;
        if !up.status.success() {
            return Err(CloudError {
                what: "cloud.sh up".into(),
                detail: format!("{}\n{}", String::from_utf8_lossy(&up.stderr), cloud.logs()),
            });
        }
        Ok(cloud)
    }

    /// The last lines of every log, for failure messages.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        if let Ok(entries) = std::fs::read_dir(self.dir.path().join("log")) {
            for entry in entries.flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                out.push_str(&format!("==> {} <==\n", entry.path().display()));
                for line in tail.into_iter().rev() {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Keystone's URL.
    pub fn auth_url(&self) -> String {
        format!("http://127.0.0.1:{}/v3", self.port)
    }

    /// Runs `populate.py` with `args`; returns its JSON (projects, servers, Placement's totals).
    pub fn populate(&self, args: &[&str]) -> Result<serde_json::Value, CloudError> {
        let output = Command::new("/usr/bin/python3")
            .arg(script("populate.py"))
            .arg(PASSWORD)
            .args(args)
            .env("ACCELFED_OS_PORT", self.port.to_string())
            .output()
            .map_err(|err| CloudError {
                what: "populate.py".into(),
                detail: err.to_string(),
            })?;
        if !output.status.success() {
            return Err(CloudError {
                what: "populate.py".into(),
                detail: format!(
                    "{}\n{}",
                    String::from_utf8_lossy(&output.stderr),
                    self.logs()
                ),
            });
        }
        serde_json::from_slice(&output.stdout).map_err(|err| CloudError {
            what: "populate.py output".into(),
            detail: err.to_string(),
        })
    }

    /// Writes a `clouds.yaml` (entry `test`) with a `secure.yaml` holding the password; returns its path.
    pub fn clouds_yaml(&self) -> PathBuf {
        let path = self.dir.path().join("clouds.yaml");
        let clouds = format!(
            "clouds:\n  test:\n    region_name: RegionOne\n    auth:\n      auth_url: {}\n      username: admin\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n",
            self.auth_url()
        );
        let secure = format!("clouds:\n  test:\n    auth:\n      password: {PASSWORD}\n");
        let _ = std::fs::write(&path, clouds);
        let _ = std::fs::write(self.dir.path().join("secure.yaml"), secure);
        path
    }
}

impl Drop for Cloud {
    fn drop(&mut self) {
        let _ = Command::new(script("cloud.sh"))
            .args(["down", &self.dir.path().to_string_lossy()])
            .env("ACCELFED_OS_PORT", self.port.to_string())
            .output();
    }
}
