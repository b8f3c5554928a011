//! Exit statuses, as a cron job reads them.

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked.
    Ok,
    /// The command finished, but a backend or publisher failed; what worked was still published.
    Partial,
    /// Usage or configuration error; nothing was done.
    Config,
}

impl Outcome {
    /// A command that finished: [`Outcome::Partial`] when something failed on the way.
    pub fn finished(partial: bool) -> Self {
        if partial { Self::Partial } else { Self::Ok }
    }
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> ExitCode {
        ExitCode::from(match outcome {
            Outcome::Ok => 0,
            Outcome::Partial => 1,
            Outcome::Config => 2,
        })
    }
}
