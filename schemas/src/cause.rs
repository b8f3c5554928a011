//! An error's chain of causes, for messages and for deciding whether a retry can help. Clients
//! (shipping, the registry push, the middleware clients) wrap their transport's error; its
//! `Display` alone often says only "error sending request", while what a person needs to act on
//! ("connection refused", "invalid peer certificate: UnknownIssuer", "received corrupt message")
//! sits several `source()`s down.
//!
//! Pure functions over `std::error::Error`: no IO, no dependency on any transport crate. TLS
//! failures are recognised by the standard library's error kind that rustls (through tokio-rustls)
//! reports them with, `InvalidData`, so this module need not name rustls.

use std::error::Error;
use std::io;

/// The error and each of its causes, outermost first, joined with `": "`. A cause whose text the
/// previous message already contains is left out, so wrapped errors that repeat their source read
/// once.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    for error in causes(error) {
        let text = readable_times(&error.to_string());
        if !text.is_empty() && !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// What to do about a failure that a retry cannot cure, read from its chain: a certificate out of
/// its validity period is the server operator's to renew (or a clock to set), not something in
/// this side's configuration; anything else is this side's settings to check.
pub fn advice(chain: &str) -> &'static str {
    if names_certificate_dates(chain) {
        CERTIFICATE_DATES
    } else {
        "check the configuration"
    }
}

/// What to do about a server certificate outside its validity period.
pub const CERTIFICATE_DATES: &str = "the server's certificate is outside its validity period: the \
     fault is on the server's side, whose operator must renew it (or a clock is wrong)";

/// Whether a chain says the peer's certificate is expired or not valid yet (rustls's words).
pub fn names_certificate_dates(chain: &str) -> bool {
    chain.contains("certificate expired") || chain.contains("certificate not valid yet")
}

/// rustls names times in seconds since 1970 ("verification time 1795753944 (UNIX), but
/// certificate is not valid after 1609459200 (186294744 seconds ago)"); a person reads dates.
/// Each number after one of those phrases becomes its RFC 3339 date, and an age in seconds days.
fn readable_times(text: &str) -> String {
    const PHRASES: [&str; 3] = [
        "verification time ",
        "not valid after ",
        "not valid before ",
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, phrase)) = PHRASES
        .iter()
        .filter_map(|phrase| rest.find(phrase).map(|at| (at, *phrase)))
        .min_by_key(|(at, _)| *at)
    {
        let start = at + phrase.len();
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let date = rest[..digits]
            .parse::<i64>()
            .ok()
            .and_then(|seconds| chrono::DateTime::from_timestamp(seconds, 0));
        if let Some(date) = date {
            out.push_str(&date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            rest = rest[digits..]
                .strip_prefix(" (UNIX)")
                .unwrap_or(&rest[digits..]);
        }
    }
    out.push_str(rest);
    readable_age(&out)
}

/// "(N seconds ago)" as "(N days ago)" once it is a day or more.
fn readable_age(text: &str) -> String {
    let Some(end) = text.find(" seconds ago)") else {
        return text.to_owned();
    };
    let digits_start = text[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |at| at + 1);
    match text[digits_start..end].parse::<u64>() {
        Ok(seconds) if seconds >= 86_400 => format!(
            "{}{} days ago){}",
            &text[..digits_start],
            seconds / 86_400,
            &text[end + " seconds ago)".len()..]
        ),
        _ => text.to_owned(),
    }
}

/// The innermost cause's text (what went wrong at the bottom: "connection refused").
pub fn root(error: &(dyn Error + 'static)) -> String {
    causes(error)
        .last()
        .map_or_else(String::new, ToString::to_string)
}

/// The `io::Error`s along the chain (a TLS or socket failure is one, wrapped by the HTTP client).
pub fn io_errors<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a io::Error> {
    causes(error).filter_map(|error| error.downcast_ref::<io::Error>())
}

/// The error and every cause below it. An `io::Error` that wraps another error is followed into
/// that error: its own `source()` skips it (it returns the wrapped error's source), and an HTTP
/// client's TLS layer wraps the handshake's `InvalidData` error in one of kind `Other`
/// (hyper-rustls does), which would hide the one fact that says no retry can help.
fn causes<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(error), |error: &&'a (dyn Error + 'static)| match error
        .downcast_ref::<io::Error>()
        .and_then(io::Error::get_ref)
    {
        Some(inner) => Some(inner as &(dyn Error + 'static)),
        None => (*error).source(),
    })
}

/// Whether the chain holds a failure that trying again cannot cure: a TLS handshake refused (a
/// certificate signed by an unknown CA, expired or issued for another name; a peer that does not
/// speak TLS), which rustls reports as `InvalidData`. Refused or reset connections, timeouts and
/// name-resolution failures are not permanent: the service may come back.
pub fn is_permanent(error: &(dyn Error + 'static)) -> bool {
    io_errors(error).any(|error| error.kind() == io::ErrorKind::InvalidData)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("error sending request for url (https://repo.example.org/)")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("client error (Connect)")]
    struct Middle(#[source] io::Error);

    #[test]
    fn the_chain_names_every_cause_once() {
        let error = Outer(Middle(io::Error::new(
            io::ErrorKind::InvalidData,
            "invalid peer certificate: UnknownIssuer",
        )));
        assert_eq!(
            chain(&error),
            "error sending request for url (https://repo.example.org/): client error (Connect): \
             invalid peer certificate: UnknownIssuer"
        );
        assert!(is_permanent(&error));
        assert_eq!(root(&error), "invalid peer certificate: UnknownIssuer");
    }

    #[test]
    fn a_tls_error_wrapped_in_another_io_error_is_still_permanent() {
        // hyper-rustls: `.map_err(io::Error::other)` around tokio-rustls's InvalidData error.
        let tls = io::Error::new(
            io::ErrorKind::InvalidData,
            "invalid peer certificate: UnknownIssuer",
        );
        let error = Outer(Middle(io::Error::other(tls)));
        assert!(is_permanent(&error));
        assert!(
            chain(&error)
                .ends_with("client error (Connect): invalid peer certificate: UnknownIssuer"),
            "{}",
            chain(&error)
        );
        assert_eq!(root(&error), "invalid peer certificate: UnknownIssuer");
    }

    #[test]
    fn certificate_times_read_as_dates_and_the_fault_is_the_servers() {
        // rustls 0.23's text for an expired certificate (its `CertificateError` Display).
        let tls = io::Error::new(
            io::ErrorKind::InvalidData,
            "invalid peer certificate: certificate expired: verification time 1795753944 (UNIX), \
             but certificate is not valid after 1609459200 (186294744 seconds ago)",
        );
        let text = chain(&Outer(Middle(tls)));
        assert!(
            text.ends_with(
                "certificate expired: verification time 2026-11-27T04:32:24Z, but certificate is \
                 not valid after 2021-01-01T00:00:00Z (2156 days ago)"
            ),
            "{text}"
        );
        assert!(advice(&text).contains("on the server's side"));
        let not_yet = readable_times(
            "certificate not valid yet: verification time 1795753944 (UNIX), but certificate is \
             not valid before 4102444800 (2306691056 seconds from now)",
        );
        assert!(
            not_yet.contains("not valid before 2100-01-01T00:00:00Z"),
            "{not_yet}"
        );
        assert!(advice(&not_yet).contains("renew"));
        assert_eq!(
            advice("invalid peer certificate: UnknownIssuer"),
            "check the configuration"
        );
        assert_eq!(readable_times("no dates here 12345"), "no dates here 12345");
    }

    #[test]
    fn refused_connections_may_be_retried() {
        let error = Outer(Middle(io::Error::from(io::ErrorKind::ConnectionRefused)));
        assert!(
            chain(&error).ends_with("connection refused"),
            "{}",
            chain(&error)
        );
        assert!(!is_permanent(&error));
    }
}
