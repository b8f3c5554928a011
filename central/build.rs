//! Names the commit the binary was built from (`accelfed --version`, `accelfed_build_info`):
//! `ACCELFED_COMMIT` from the environment when set (a package build from a source tarball sets
//! it), else `git rev-parse` of the checkout, else `unknown`, so a build without git (or outside
//! a clone) still works.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=ACCELFED_COMMIT");
    let from_env = std::env::var("ACCELFED_COMMIT")
        .ok()
        .map(|commit| commit.trim().to_owned())
        .filter(|commit| !commit.is_empty());
    let commit = match from_env {
        Some(commit) => commit,
        None => {
            // Built again when HEAD moves: HEAD itself (a checkout) and the branch it names (a
            // commit), wherever this checkout keeps them (a worktree's .git is a file).
            for path in [git(&["rev-parse", "--git-path", "HEAD"])]
                .into_iter()
                .chain([git(&["symbolic-ref", "-q", "HEAD"])
                    .and_then(|branch| git(&["rev-parse", "--git-path", &branch]))])
                .flatten()
            {
                let path = std::path::Path::new(&path);
                let path = if path.is_absolute() {
                    path.to_path_buf()
                } else {
                    std::env::current_dir().unwrap_or_default().join(path)
                };
                if path.exists() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
            git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned())
        }
    };
    // Printed into a label and a version line: keep it to what a commit id or tag holds.
    let commit: String = commit
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
        .take(64)
        .collect();
    println!("cargo:rustc-env=ACCELFED_COMMIT={commit}");
}
