//! TLS for PostgreSQL, as libpq users know it: the URL's `sslmode` (`disable`, `prefer` (the
//! default), `require`, `verify-ca`, `verify-full`) and `sslrootcert` (a PEM file, or `system`
//! for the system's roots alone), with the certificates the project's one [`Trust`] names.
//!
//! tokio-postgres reads only `disable`, `prefer` and `require` and no certificate settings, so
//! [`target`] takes both parameters out of the URL, hands the rest to tokio-postgres, and returns
//! the connector ([`PostgresTls`]) that does what the mode asks:
//!
//! | sslmode | TLS | certificate checked | host name checked |
//! |---|---|---|---|
//! | `disable` | never | - | - |
//! | `prefer` (default) | when the server offers it | only with `sslrootcert` | no |
//! | `require` | always | only with `sslrootcert` | no |
//! | `verify-ca` | always | yes | no |
//! | `verify-full` | always | yes | yes |
//!
//! As in libpq, `require` and `prefer` with an `sslrootcert` check the chain as `verify-ca` does.
//! The roots a chain is checked against are the system's, the [`Trust`]'s extra certificates
//! (the configuration's CA), and the `sslrootcert` file's; `sslrootcert=system` adds nothing.

mod connector;
mod target;
mod verify;

pub use connector::{PostgresTls, PostgresTlsStream};
pub use target::{PostgresTarget, SslMode, target};

#[cfg(test)]
mod tests;

use crate::trust::Trust;
