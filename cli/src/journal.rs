//! Log priorities for the systemd journal. A unit's standard error is a stream socket to journald,
//! which stores every line at the unit's default priority (info) unless the line starts with a
//! `<N>` syslog priority prefix (sd-daemon(3); journald's `SyslogLevelPrefix=`, on by default).
//! Without the prefix `journalctl -p err` and syslog-level alerting miss every error. systemd says
//! that stderr is its stream by setting `JOURNAL_STREAM=<device>:<inode>` (systemd.exec(5)); the
//! prefix is written only when that matches our stderr, so a terminal, a pipe or a cron mail never
//! sees it. A prefix rather than the journal's native protocol (tracing-journald): no second
//! output path to keep in step with `--log-format`, and journald strips it from the message.

use std::fmt;
use std::os::fd::AsFd;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The syslog priority of a tracing level: err, warning, info, debug.
pub fn priority(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        _ => 7,
    }
}

/// Whether standard error is the journal stream systemd announced in `JOURNAL_STREAM`.
pub fn stderr_is_journal() -> bool {
    let Some(announced) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    let Some(announced) = announced.to_str().and_then(parse_stream) else {
        return false;
    };
    stderr_identity().is_some_and(|ours| ours == announced)
}

/// `<device>:<inode>` as systemd writes it (both decimal).
fn parse_stream(text: &str) -> Option<(u64, u64)> {
    let (device, inode) = text.split_once(':')?;
    Some((device.parse().ok()?, inode.parse().ok()?))
}

fn stderr_identity() -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
    let metadata = std::fs::File::from(fd).metadata().ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// Writes each event's priority prefix, then the event as `inner` formats it (text or JSON).
#[derive(Debug)]
pub struct Prioritized<F>(pub F);

impl<S, N, F> FormatEvent<S, N> for Prioritized<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        write!(writer, "<{}>", priority(event.metadata().level()))?;
        self.0.format_event(ctx, writer, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_syslog_priorities() {
        assert_eq!(priority(&Level::ERROR), 3);
        assert_eq!(priority(&Level::WARN), 4);
        assert_eq!(priority(&Level::INFO), 6);
        assert_eq!(priority(&Level::DEBUG), 7);
        assert_eq!(priority(&Level::TRACE), 7);
    }

    #[test]
    fn journal_stream_is_device_colon_inode() {
        assert_eq!(parse_stream("8:1234567"), Some((8, 1_234_567)));
        assert_eq!(parse_stream("8"), None);
        assert_eq!(parse_stream("x:1"), None);
        assert_eq!(parse_stream(""), None);
    }
}
