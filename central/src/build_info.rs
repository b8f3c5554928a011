//! What this binary is: its version and the commit it was built from (`build.rs`).

/// The package version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit, short form (`unknown` for a build without git and without `ACCELFED_COMMIT`).
pub const COMMIT: &str = env!("ACCELFED_COMMIT");
/// `accelfed --version`'s text after the program name.
pub const VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ACCELFED_COMMIT"),
    ")"
);
