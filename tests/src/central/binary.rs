//! The `accelfed` binary of this build, for the command-line tests: found beside the test
//! executable (`target/<profile>/accelfed`, which cargo builds before the `accelfed` crate's
//! integration tests), or at `ACCELFED_TEST_BIN`.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The path of the `accelfed` binary.
pub fn accelfed_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("ACCELFED_TEST_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    // target/<profile>/deps/<test>-<hash> -> target/<profile>/accelfed
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test executable lies in target/<profile>/deps");
    let binary = profile.join("accelfed");
    assert!(
        binary.is_file(),
        "{} is missing: the command-line tests run from the accelfed crate's tests, which build it \
         (or set ACCELFED_TEST_BIN)",
        binary.display()
    );
    binary
}

/// A command for the `accelfed` binary.
pub fn accelfed() -> Command {
    Command::new(accelfed_binary())
}

/// The uid and gid of `nobody`, who owns nothing in a test's folders: the other user of the tests
/// of ownership (they run as root).
pub const NOBODY: u32 = 65534;

/// A command for the `accelfed` binary run as `nobody` through `setpriv` (no other group), or as
/// this process where `as_nobody` is false.
pub fn accelfed_as(as_nobody: bool) -> Command {
    if !as_nobody {
        return accelfed();
    }
    let mut command = Command::new("setpriv");
    command
        .arg(format!("--reuid={NOBODY}"))
        .arg(format!("--regid={NOBODY}"))
        .arg("--clear-groups")
        .arg(accelfed_binary());
    command
}

/// Runs `accelfed` with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    accelfed().args(args).output().expect("accelfed runs")
}

/// The exit status, -1 for a signal.
pub fn status(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

/// The standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
