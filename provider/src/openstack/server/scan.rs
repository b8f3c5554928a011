//! A server read with [`Scanner`] instead of serde: the same [`Server`] from the same bytes, with
//! the ignored keys skipped by structure rather than compared and parsed one by one. This is how
//! server pages are read (`client::read_nova_page`); the serde reader in `mod.rs` stays for
//! servers inside other documents and is the reference the tests compare against.

use super::{Building, Part, Server};
use crate::json::{ScanError, Scanner};

/// Reads the server object at the scanner.
pub fn scan(s: &mut Scanner<'_>) -> Result<Server, ScanError> {
    // `None`: the scratch buffer was busy (a bug); the position is only worked out then
    Server::build(|| None, |building| members(s, building).map_err(Some))
        .map_err(|err| err.unwrap_or_else(|| s.error("server scratch buffer in use")))
}

/// The server's members into `b`; returns `launched`.
fn members(s: &mut Scanner<'_>, b: &mut Building) -> Result<Option<bool>, ScanError> {
    let (mut launched, mut has_flavor) = (None, false);
    s.object("a Nova server", |s, key| {
        let key = s.key(key)?;
        // by length first: nearly every key is one of the fifty the meter skips, and most of them
        // are then refused by one comparison of lengths instead of ten
        let part = match (key.len(), key.as_ref()) {
            (2, b"id") => Part::Id,
            (4, b"name") => Part::Name,
            (6, b"status") => Part::Status,
            (9, b"tenant_id") => Part::TenantId,
            (7, b"user_id") => Part::UserId,
            (7, b"created") => Part::Created,
            (7, b"updated") => Part::Updated,
            (24, b"OS-SRV-USG:terminated_at") => Part::TerminatedAt,
            (22, b"OS-SRV-USG:launched_at") => {
                launched = Some(!s.null()?);
                if launched == Some(true) {
                    s.skip_value()?;
                }
                return Ok(());
            }
            (6, b"flavor") => {
                flavor(s, b)?;
                has_flavor = true;
                return Ok(());
            }
            _ => {
                s.skip_value()?;
                return Ok(());
            }
        };
        text(s, b, part)
    })?;
    if let Some(name) = b.missing() {
        return Err(s.error(format!("server without `{name}`")));
    }
    if !has_flavor {
        return Err(s.error("server without `flavor`"));
    }
    Ok(launched)
}

/// A string or null member into `part`.
fn text(s: &mut Scanner<'_>, b: &mut Building, part: Part) -> Result<(), ScanError> {
    if s.null()? {
        return Ok(());
    }
    if s.peek() != Some(b'"') {
        return Err(s.error(format!("server {part:?}: expected a string or null")));
    }
    let raw = s.string()?;
    let start = b.start();
    s.decode_into(raw, &mut b.text)?;
    b.mark(part, start)
        .map_err(|err: serde_json::Error| s.error(err.to_string()))
}

/// The `flavor` object: its id (before 2.47), original name and extra specs (2.47 on).
fn flavor(s: &mut Scanner<'_>, b: &mut Building) -> Result<(), ScanError> {
    s.object("a server's flavor", |s, key| match s.key(key)?.as_ref() {
        b"id" => text(s, b, Part::FlavorId),
        b"original_name" => text(s, b, Part::FlavorName),
        b"extra_specs" => specs(s, b),
        _ => s.skip_value().map(drop),
    })
}

/// The extra specs object's text, as Nova sent it; it is read into a map once per distinct
/// flavor (`map.rs`), where a malformed one is named with its flavor.
fn specs(s: &mut Scanner<'_>, b: &mut Building) -> Result<(), ScanError> {
    if s.null()? {
        return Ok(());
    }
    if s.peek() != Some(b'{') {
        return Err(s.error("extra specs: expected an object or null"));
    }
    let raw = s.skip_value()?;
    let text = std::str::from_utf8(raw).map_err(|_| s.error("extra specs are not UTF-8"))?;
    let start = b.start();
    b.text.push_str(text);
    b.mark(Part::FlavorSpecs, start)
        .map_err(|err: serde_json::Error| s.error(err.to_string()))
}
