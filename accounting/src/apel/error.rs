//! Why an APEL export stopped. Each error says whether running `accelfed export` again can help;
//! the watermark only moves past records that were delivered, so nothing is lost either way.

use std::path::PathBuf;

use crate::spool::SpoolError;

#[derive(Debug, thiserror::Error)]
pub enum ApelError {
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error("APEL outgoing queue {path}: {source} (retry may help once the directory is writable)")]
    Queue {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("APEL export watermark {path}: {message}")]
    Watermark { path: PathBuf, message: String },
    #[error(
        "ARGO AMS {endpoint}: {message} (retry will not help: {})",
        accelfed_schemas::cause::advice(message)
    )]
    Settings { endpoint: String, message: String },
    #[error(
        "ARGO AMS {endpoint}: gave up after {attempts} attempts: {message} \
         (retry may help; the watermark did not move)"
    )]
    Unreachable {
        endpoint: String,
        attempts: u32,
        message: String,
    },
    #[error(
        "signing with {certificate}: {message} (retry will not help: check the certificate, \
         the key and that openssl is installed)"
    )]
    Sign {
        certificate: PathBuf,
        message: String,
    },
    #[error(
        "a signed message would make a {bytes}-byte AMS request, over the {limit}-byte limit \
         (not sent; retry will not help: raise max_message_bytes or report a bug)"
    )]
    Envelope { bytes: usize, limit: usize },
    #[error("ARGO AMS {endpoint} refused the message: {message} (retry will not help)")]
    Refused { endpoint: String, message: String },
}
