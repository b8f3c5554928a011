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
        let text = error.to_string();
        if !text.is_empty() && !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
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
