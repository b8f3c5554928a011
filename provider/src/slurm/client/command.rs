//! Running `sinfo`, `scontrol` and `sacct`: each in its own process group, with a timeout, killed
//! when it passes or when its output is no longer wanted.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::slurm::error::SlurmError;

use super::SlurmClient;

impl SlurmClient {
    pub(super) fn command_path(&self, name: &str) -> PathBuf {
        match &self.cli.bin_dir {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        }
    }

    pub(super) fn command(&self, name: &str, args: &[&str]) -> (Command, String) {
        let mut command = Command::new(self.command_path(name));
        command.args(args);
        // sacct reads and prints times in the local zone; accelfed works in UTC.
        command.env("TZ", "UTC");
        if let Some(conf) = &self.cli.slurm_conf {
            command.env("SLURM_CONF", conf);
        }
        let shown = format!("{} {}", self.command_path(name).display(), args.join(" "));
        (command, shown)
    }

    /// Runs a command to completion; its stdout, or an error naming it with status and stderr.
    /// A command killed at its timeout is reported with the stderr it wrote until then.
    pub(super) async fn run(
        &self,
        name: &str,
        args: &[&str],
    ) -> Result<(String, Vec<u8>), SlurmError> {
        use tokio::io::AsyncReadExt;

        let (mut command, shown) = self.command(name, args);
        // Its own process group, so a wrapper script's children go with it at the timeout.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut command = tokio::process::Command::from(command);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let spawn_error = |message: String| SlurmError::Spawn {
            command: shown.clone(),
            message,
        };
        let mut child = command
            .spawn()
            .map_err(|err| spawn_error(err.to_string()))?;
        let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_error("no pipes to the child".to_owned()));
        };
        // stderr is collected as it arrives, so a command killed at its timeout still says why.
        let written = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let collected = written.clone();
        let stderr_reader = tokio::spawn(async move {
            let mut chunk = [0_u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
                if let Ok(mut text) = collected.lock() {
                    text.extend_from_slice(&chunk[..n]);
                }
            }
        });
        let stderr_text = |written: &std::sync::Mutex<Vec<u8>>| {
            written
                .lock()
                .map(|text| String::from_utf8_lossy(&text).trim().to_owned())
                .unwrap_or_default()
        };
        let finished = async {
            let mut output = Vec::new();
            stdout.read_to_end(&mut output).await?;
            let status = child.wait().await?;
            Ok::<_, std::io::Error>((output, status))
        };
        let timeout = Duration::from_secs(*self.cli.timeout_s.get_ref());
        let result = tokio::time::timeout(timeout, finished).await;
        let (output, status) = match result {
            Ok(Ok(done)) => done,
            Ok(Err(err)) => return Err(spawn_error(err.to_string())),
            Err(_) => {
                if let Some(id) = child.id() {
                    let group = format!("-{id}");
                    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                }
                let _ = child.kill().await;
                stderr_reader.abort();
                return Err(SlurmError::Timeout {
                    command: shown,
                    timeout_s: *self.cli.timeout_s.get_ref(),
                    stderr: stderr_text(&written),
                });
            }
        };
        // The command exited; its stderr ends with it (or soon after, for a lingering child).
        let _ = tokio::time::timeout(Duration::from_secs(1), stderr_reader).await;
        if !status.success() {
            return Err(SlurmError::Failed {
                command: shown,
                status: status.to_string(),
                stderr: stderr_text(&written),
            });
        }
        Ok((shown, output))
    }
}

/// How a command run by [`Watchdog`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// By itself.
    Exited,
    /// Killed at its timeout.
    TimedOut,
    /// Killed because its output was no longer wanted (its document was refused) and it did not
    /// exit within a short grace time.
    Stopped,
}

/// Kills a child that runs past its time, or whose output was abandoned; reaps it either way.
pub(super) struct Watchdog {
    done: mpsc::Sender<bool>,
    thread: std::thread::JoinHandle<(Option<std::process::ExitStatus>, Ended)>,
}

/// How long a command whose output was abandoned may take to exit by itself (with its own error,
/// which explains a truncated document better than the parser).
pub(super) const GRACE: Duration = Duration::from_secs(2);

impl Watchdog {
    pub(super) fn start(mut child: std::process::Child, timeout: Duration) -> Self {
        let (done, finished) = mpsc::channel::<bool>();
        let started = std::time::Instant::now();
        let thread = std::thread::spawn(move || {
            let ended = match finished.recv_timeout(timeout) {
                Err(mpsc::RecvTimeoutError::Timeout) => Ended::TimedOut,
                Ok(true) => {
                    let grace = GRACE.min(timeout.saturating_sub(started.elapsed()));
                    let deadline = std::time::Instant::now() + grace;
                    loop {
                        match child.try_wait() {
                            Ok(Some(_)) | Err(_) => break Ended::Exited,
                            Ok(None) if std::time::Instant::now() >= deadline => {
                                break Ended::Stopped;
                            }
                            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                        }
                    }
                }
                Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => Ended::Exited,
            };
            if ended != Ended::Exited {
                // The command runs in its own process group: a wrapper script's children (which
                // hold the output pipe open) go with it.
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                let _ = child.kill();
            }
            (child.wait().ok(), ended)
        });
        Self { done, thread }
    }

    /// Called once the output has been read to its end (`abandoned = false`) or given up on.
    pub(super) fn finish(self, abandoned: bool) -> (Option<std::process::ExitStatus>, Ended) {
        let _ = self.done.send(abandoned);
        self.thread.join().unwrap_or((None, Ended::Exited))
    }
}
