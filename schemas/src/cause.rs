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
    let mut current = Some(error);
    while let Some(error) = current {
        let text = error.to_string();
        if !text.is_empty() && !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        current = error.source();
    }
    parts.join(": ")
}

/// The innermost cause's text (what went wrong at the bottom: "connection refused").
pub fn root(error: &(dyn Error + 'static)) -> String {
    std::iter::successors(Some(error), |error: &&(dyn Error + 'static)| {
        (*error).source()
    })
    .last()
    .map_or_else(String::new, ToString::to_string)
}

/// The `io::Error`s along the chain (a TLS or socket failure is one, wrapped by the HTTP client).
pub fn io_errors<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a io::Error> {
    std::iter::successors(Some(error), |error: &&'a (dyn Error + 'static)| {
        (*error).source()
    })
    .filter_map(|error| error.downcast_ref::<io::Error>())
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
