//! Helpers the fuzz targets share.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use chrono::{DateTime, TimeZone, Utc};

/// A fixed "now", so a run is reproducible from its input alone.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 15, 12, 0, 0)
        .single()
        .expect("a valid date")
}

/// Polls a future that does no IO (a configuration with only static services) to its end, with no
/// runtime: such a future never waits, so one poll finishes it. `None` if it would wait.
pub fn run_ready<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

/// Splits an input into a selector (its first byte) and the rest, for targets that feed several
/// readers of one backend.
pub fn select(data: &[u8]) -> Option<(u8, &[u8])> {
    let (&first, rest) = data.split_first()?;
    Some((first, rest))
}

/// Reads LDIF as `LdifWriter` writes it back into records of `(name, value)`, the `dn` first:
/// continuation lines joined, `name:: base64` decoded. `Err` names what is not LDIF.
pub fn read_ldif(ldif: &[u8]) -> Result<Vec<Vec<(String, String)>>, String> {
    use base64::Engine as _;
    let text = std::str::from_utf8(ldif).map_err(|error| format!("not UTF-8: {error}"))?;
    if !text.is_ascii() {
        return Err("LDIF with a non-ASCII byte".into());
    }
    let unfolded = text.replace("\n ", "");
    let mut records = Vec::new();
    for record in unfolded.split("\n\n").filter(|r| !r.trim().is_empty()) {
        let mut lines = Vec::new();
        for line in record.lines() {
            if let Some((name, encoded)) = line.split_once(":: ") {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|error| format!("line {line:?}: {error}"))?;
                let value =
                    String::from_utf8(bytes).map_err(|error| format!("line {line:?}: {error}"))?;
                lines.push((name.to_owned(), value));
            } else if let Some((name, value)) = line.split_once(": ") {
                lines.push((name.to_owned(), value.to_owned()));
            } else {
                return Err(format!("line {line:?} is not `name: value`"));
            }
        }
        records.push(lines);
    }
    Ok(records)
}

/// A reader that hands out at most `chunk` bytes a call, so streaming readers meet every window
/// boundary a slow pipe or socket can make.
#[derive(Debug)]
pub struct Trickle<'a> {
    pub data: &'a [u8],
    pub chunk: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.data.len().min(buf.len()).min(self.chunk.max(1));
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Splits an input into `N` parts at NUL bytes (which no JSON text holds raw), for targets that
/// read several API responses; missing parts are empty.
pub fn parts<const N: usize>(data: &[u8]) -> [&[u8]; N] {
    let mut out = [&data[..0]; N];
    for (slot, part) in out.iter_mut().zip(data.splitn(N, |&byte| byte == 0)) {
        *slot = part;
    }
    out
}
