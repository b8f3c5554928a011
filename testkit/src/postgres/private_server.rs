//! A PostgreSQL server of a test's own, for tests that stop and start the database under a
//! running service (the machine's server must never be restarted): `initdb` and `pg_ctl` of the
//! machine's packages (Debian's `/usr/lib/postgresql/<version>/bin`), a data folder in a temporary
//! folder, trust authentication on 127.0.0.1 only, on a port reserved for it
//! ([`crate::port::ReservedPort`], kept for the server's whole life so that a restart finds its
//! port free). The server runs as the `postgres` user (it refuses root), started through `runuser`.
//! Dropping the value stops it (`pg_ctl stop -m immediate`), a panicking test included.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::port::ReservedPort;

/// A running private server; stopped when dropped.
#[derive(Debug)]
pub struct PrivateServer {
    /// `postgres://postgres@127.0.0.1:<port>`, without a database.
    pub url: String,
    bin: PathBuf,
    data: PathBuf,
    port: ReservedPort,
    _dir: tempfile::TempDir,
}

/// The newest installed server's programs.
fn bin_folder() -> Result<PathBuf, String> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("/usr/lib/postgresql: {e} (install postgresql)"))?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no /usr/lib/postgresql/<version>/bin/initdb".to_owned())
}

impl PrivateServer {
    /// `initdb`, then [`Self::start`]; panics with the programs' output when either fails.
    pub fn start_new() -> PrivateServer {
        let bin = bin_folder().unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().expect("a folder for the server");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).expect("the data folder");
        chown_postgres(dir.path());
        let initdb = bin.join("initdb");
        let mut command = as_postgres(&initdb);
        command.args(["--auth=trust", "--username=postgres", "--no-sync", "-D"]);
        command.arg(&data);
        run(&mut command, "initdb");
        let port = ReservedPort::new().expect("a port for the server");
        let server = PrivateServer {
            url: format!("postgres://postgres@127.0.0.1:{}", port.port()),
            bin,
            data,
            port,
            _dir: dir,
        };
        server.start();
        server
    }

    /// `pg_ctl start -w`: returns once the server takes connections.
    pub fn start(&self) {
        let socket = self.data.parent().unwrap_or(&self.data);
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port.port(),
            socket.display()
        );
        let mut command = as_postgres(&self.bin.join("pg_ctl"));
        command
            .args(["start", "-w", "-t", "60", "-D"])
            .arg(&self.data)
            .args(["-o", &options, "-l"])
            .arg(self.log());
        run(&mut command, "pg_ctl start");
    }

    /// `pg_ctl stop -m <mode>` (`fast`: sessions are ended, as an operator's restart does).
    pub fn stop(&self, mode: &str) {
        let mut command = as_postgres(&self.bin.join("pg_ctl"));
        command
            .args(["stop", "-w", "-t", "60", "-m", mode, "-D"])
            .arg(&self.data);
        run(&mut command, "pg_ctl stop");
    }

    /// Creates database `name`; its URL.
    pub async fn create_database(&self, name: &str) -> String {
        super::admin(
            &self.url,
            &format!("CREATE DATABASE {name}"),
            "the private server",
        )
        .await;
        format!("{}/{name}", self.url)
    }

    fn log(&self) -> PathBuf {
        self.data.with_file_name("server.log")
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = as_postgres(&self.bin.join("pg_ctl"))
            .args(["stop", "-w", "-m", "immediate", "-D"])
            .arg(&self.data)
            .output();
    }
}

/// `program` run as the `postgres` user when this process is root (the server refuses root).
fn as_postgres(program: &Path) -> Command {
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    if root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn chown_postgres(folder: &Path) {
    let _ = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(folder)
        .status();
}

fn run(command: &mut Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what}: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
