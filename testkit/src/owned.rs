//! Processes the harness owns: each component starts as the leader of a process group of its own
//! ([`OwnedProcess::spawn`]) and is stopped as a group, SIGTERM then SIGKILL, so the helpers it
//! forked go with it. Stopping happens in `Drop` as well, so a test that panics still stops what
//! it started; what outlives a test binary killed outright (SIGKILL gives no `Drop`) is caught by
//! the leftover check at the end of scripts/test, which fails the run naming it.
//!
//! The workspace forbids `unsafe_code`, so signals go through `kill(1)` (procps, on every Debian
//! machine) rather than libc: `kill -TERM -- -<pgid>` signals the whole group.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A running component, leader of its own process group; the group is stopped when dropped.
#[derive(Debug)]
pub struct OwnedProcess {
    name: String,
    child: Child,
    stopped: bool,
}

/// How long a group gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(5);

impl OwnedProcess {
    /// Spawns `command` as the leader of a new process group (`setpgid(0, 0)` in the child).
    /// `name` is for messages.
    pub fn spawn(name: impl Into<String>, command: &mut Command) -> io::Result<OwnedProcess> {
        let child = command.process_group(0).spawn()?;
        Ok(OwnedProcess {
            name: name.into(),
            child,
            stopped: false,
        })
    }

    /// The leader's process id, which is also the group's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// What the component is called in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The leader as a [`Child`] (its pipes, `try_wait`).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The leader's exit status, when it has exited.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Stops the whole group: SIGTERM, up to `grace` for the leader to exit, then SIGKILL to
    /// whatever of the group is left (helpers the leader forked included), and reaps the leader.
    pub fn stop(&mut self, grace: Duration) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let group = self.child.id();
        signal_group(group, "TERM");
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        // The leader may be gone while members it forked are not: the group is killed either way.
        signal_group(group, "KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Stops the group with SIGKILL at once (a crash, not a shutdown) and reaps the leader.
    pub fn kill(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        signal_group(self.child.id(), "KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OwnedProcess {
    fn drop(&mut self) {
        self.stop(GRACE);
    }
}

/// Sends `signal` (a name such as `TERM`) to every process of group `group`; a group that is
/// already gone is not an error.
pub fn signal_group(group: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), "--", &format!("-{group}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Process ids whose environment holds `entry` (`NAME=value`, as in /proc/<pid>/environ): how a
/// component's processes that left its group are found (slurmstepd, which slurmd starts in a
/// session of its own, keeps slurmd's `SLURM_CONF`). Processes whose environment cannot be read
/// (another user's, when not root) are not listed.
pub fn processes_with_env(entry: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id();
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: u32) -> bool {
        // A zombie still has a /proc entry; its state is Z.
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|s| !s.trim_start().starts_with('Z'))
        })
    }

    /// The group's members, leader included, read from /proc.
    fn members(group: u32) -> Vec<u32> {
        let entries = std::fs::read_dir("/proc").expect("/proc");
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    // Fields after the command's closing parenthesis: state ppid pgrp ...
                    let rest: Vec<&str> = stat
                        .rsplit(')')
                        .next()
                        .unwrap_or("")
                        .split_whitespace()
                        .collect();
                    rest.get(2) == Some(&group.to_string().as_str()) && rest.first() != Some(&"Z")
                })
            })
            .collect()
    }

    #[test]
    fn stopping_kills_the_forked_helpers_too() {
        // The shell forks a sleep that ignores nothing and outlives the shell's own exit on TERM.
        let mut process = OwnedProcess::spawn(
            "sh",
            Command::new("sh").args(["-c", "sleep 300 & sleep 300 & wait"]),
        )
        .expect("sh starts");
        let group = process.id();
        let deadline = Instant::now() + Duration::from_secs(10);
        while members(group).len() < 3 {
            assert!(Instant::now() < deadline, "the two sleeps never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        let helpers: Vec<u32> = members(group).into_iter().filter(|&p| p != group).collect();
        assert_eq!(helpers.len(), 2, "{helpers:?}");
        process.stop(Duration::from_secs(2));
        let deadline = Instant::now() + Duration::from_secs(5);
        while helpers.iter().any(|&p| alive(p)) {
            assert!(
                Instant::now() < deadline,
                "helpers {helpers:?} outlived the stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(members(group).is_empty());
    }

    #[test]
    fn a_panicking_test_still_stops_the_group() {
        let mut pid = None;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let process = OwnedProcess::spawn("sleep", Command::new("sleep").arg("300"))
                .expect("sleep starts");
            pid = Some(process.id());
            panic!("the test fails while the process runs");
        }));
        assert!(result.is_err());
        let pid = pid.expect("the process started");
        assert!(!alive(pid), "sleep {pid} outlived the panicking test");
    }

    #[test]
    fn processes_are_found_by_an_environment_entry() {
        let marker = format!("ACCELFED_OWNED_TEST={}", std::process::id());
        let (key, value) = marker.split_once('=').expect("a NAME=value marker");
        let mut process =
            OwnedProcess::spawn("sleep", Command::new("sleep").arg("300").env(key, value))
                .expect("sleep starts");
        // Under load the new process's environment can read as not yet there for a moment (seen
        // once in a full run): look again for a while before calling it missing.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut found = processes_with_env(&marker);
        while found.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            found = processes_with_env(&marker);
        }
        assert_eq!(found, vec![process.id()]);
        process.kill();
        assert!(processes_with_env(&marker).is_empty());
    }
}
