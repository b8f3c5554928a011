//! accelfed's one network layer, which every client of the project uses:
//!
//! * [`trust`]: the system's roots plus a PEM file or an IGTF CA folder.
//! * [`https`]: the one HTTPS client builder (reqwest, rustls), with one overall deadline per call.
//! * [`grpc`]: tonic's TLS settings and endpoint from the same trust.
//! * [`deadline`]: a whole call (connect, TLS handshake, request, answer) within its time, and the
//!   words for one that ran out of it.
//! * [`postgres`]: TLS for PostgreSQL, with libpq's `sslmode` and `sslrootcert`.
//! * [`tls`]: a rustls client configuration from the same trust (the LDAP clients).
//! * [`secret`]: secret files, read with the permission warning.
//! * [`url`]: `HttpsUrl`, checked when the configuration is read.
//! * [`url_list`]: `HttpsUrls`, one or several URLs of one service in the order they are tried.
//! * [`write_access`]: whether this process may write a file, and the owner, mode and fix when not
//!   (the spool, the central repository and documents check it before writing).
//! * [`cause`]: whether a retry can help, re-exported from `accelfed-schemas` (pure, and used by
//!   the servers' side too, so it stays there).

pub mod deadline;
pub mod grpc;
pub mod https;
pub mod postgres;
pub mod secret;
pub mod tls;
pub mod trust;
pub mod url;
pub mod url_list;
pub mod write_access;

pub use accelfed_schemas::cause;
pub use deadline::{TimedOut, within};
pub use https::{ClientSettings, HttpsClient};
pub use trust::Trust;
pub use url::HttpsUrl;
pub use url_list::HttpsUrls;
