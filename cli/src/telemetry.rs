//! Logging, set up once: lines on standard error, so standard output carries only data (a BDII
//! reads it).
//!
//! Levels: accelfed's own crates log at info by default (one summary line per run or request says
//! what happened, which is what a cron mail or a service's journal should show); other crates only
//! warn. `-v` makes accelfed's crates debug and leaves the HTTP/2 and TLS libraries quiet; `-vv`
//! is debug for everything (accelfed at trace); `-q` errors only. `RUST_LOG` overrides all of it.
//! `--log-format json` writes one JSON object per event, for central services whose logs are
//! collected by machines. Under systemd every line starts with its syslog priority (journal.rs).

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

use crate::journal::Prioritized;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per event (timestamp, level, fields, message).
    Json,
}

/// The crates whose summaries and decisions are accelfed's own log.
const OWN_CRATES: &[&str] = &[
    "accelfed",
    "accelfed_schemas",
    "accelfed_provider",
    "accelfed_accounting",
    "accelfed_publishers",
    "accelfed_central",
];

/// The filter directive the flags choose (see the module documentation).
pub fn directive(verbose: u8, quiet: bool) -> String {
    let (others, own) = match (quiet, verbose) {
        (true, _) => return "error".to_owned(),
        (false, 0) => ("warn", "info"),
        (false, 1) => ("warn", "debug"),
        (false, _) => ("debug", "trace"),
    };
    let mut directive = others.to_owned();
    for krate in OWN_CRATES {
        directive.push_str(&format!(",{krate}={own}"));
    }
    directive
}

pub fn init(verbose: u8, quiet: bool, format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(directive(verbose, quiet)));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    // Under systemd each line carries its priority for the journal (journal.rs); the journal
    // stamps its own time, so the prefixed text lines leave theirs out.
    let journal = crate::journal::stderr_is_journal();
    match (format, journal) {
        (LogFormat::Json, false) => builder.json().init(),
        (LogFormat::Json, true) => {
            let json = tracing_subscriber::fmt::format().json().with_target(false);
            builder
                .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
                .event_format(Prioritized(json))
                .init()
        }
        (LogFormat::Text, true) => {
            let text = tracing_subscriber::fmt::format()
                .with_target(false)
                .with_ansi(false)
                .without_time();
            builder.event_format(Prioritized(text)).init()
        }
        // Colours only for a person at a terminal: cron mail and log files get plain text.
        (LogFormat::Text, false) => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accelfed_is_info_by_default_and_debug_with_one_v_while_libraries_stay_quiet() {
        let default = directive(0, false);
        assert!(default.starts_with("warn,"), "{default}");
        assert!(default.contains("accelfed_accounting=info"), "{default}");
        let verbose = directive(1, false);
        assert!(
            verbose.starts_with("warn,"),
            "h2 and rustls stay at warn: {verbose}"
        );
        assert!(verbose.contains("accelfed_central=debug"), "{verbose}");
        assert!(directive(2, false).starts_with("debug,"));
        assert_eq!(directive(3, true), "error");
        for text in [default, verbose] {
            assert!(EnvFilter::try_new(&text).is_ok(), "{text}");
        }
    }
}
