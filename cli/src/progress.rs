//! Progress spinners for long runs, drawn only for a person at a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// What a person at a terminal sees while a long backfill runs: a spinner while the backends are
/// asked, while observations become records and while the spool is written. Drawn
/// only when standard error is a terminal and `-q` was not given; under cron (no terminal) and
/// with `-q` every bar is hidden and nothing is written.
pub struct Progress {
    visible: bool,
}

impl Progress {
    pub fn new() -> Self {
        use std::io::IsTerminal;
        // -q sets the log level to errors only; a bar is not an error.
        let quiet = tracing::level_filters::LevelFilter::current()
            < tracing::level_filters::LevelFilter::WARN;
        Self {
            visible: std::io::stderr().is_terminal() && !quiet,
        }
    }

    fn target(&self) -> ProgressDrawTarget {
        if self.visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        }
    }

    pub fn spinner(&self, message: String) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, self.target()).with_message(message);
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    }
}
