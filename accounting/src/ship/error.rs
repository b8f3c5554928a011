//! Why shipping stopped. Each error says whether running `accelfed ship` again later can help.

use crate::spool::SpoolError;

#[derive(Debug, thiserror::Error)]
pub enum ShipError {
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(
        "repository {endpoint}: {message} (retry will not help: {})",
        accelfed_schemas::cause::advice(message)
    )]
    Settings { endpoint: String, message: String },
    #[error(
        "repository {endpoint}: gave up after {attempts} attempts: {message} \
         (retry may help; the records stay in the spool)"
    )]
    Unreachable {
        endpoint: String,
        attempts: u32,
        message: String,
    },
    #[error(
        "repository {endpoint} refused the site: {message} (retry will not help: check the token)"
    )]
    Refused { endpoint: String, message: String },
    #[error("repository {endpoint}: {message} (retry may help; the records stay in the spool)")]
    Protocol { endpoint: String, message: String },
}
