//! `[accounting.apel]`: where `accelfed export` sends the spool's records as APEL accelerator
//! messages, for EGI's accounting repository. Exactly one destination: `[accounting.apel.dirq]`
//! (an ssmsend outgoing directory; ssmsend signs) or `[accounting.apel.ams]` (ARGO AMS directly,
//! each message signed with the site's host certificate, as ssmsend would). Read only by the APEL
//! export, so it lives beside it.

use std::path::PathBuf;

use serde::Deserialize;

/// `[accounting.apel]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApelConfig {
    /// The file holding the last spool version exported; default: the spool's path with
    /// `.apel-watermark` appended. Delete it to export everything again.
    #[serde(default)]
    pub watermark: Option<PathBuf>,
    /// The character set of the APEL database (`utf8`, MySQL's 3-byte utf8, or `latin1`): what
    /// characters a record may hold (docs/operations.md, "APEL export").
    #[serde(default)]
    pub charset: ApelCharset,
    /// The most bytes one message may take as it reaches AMS: signed, base64-encoded and wrapped
    /// in AMS's JSON request. Default 1000000 (AMS's 1 MB).
    #[serde(default = "default_max_message_bytes")]
    pub max_message_bytes: usize,
    /// Bytes set aside for ssmsend's signature in the dirq mode, where accelfed does not sign
    /// (the AMS mode measures its own). Default 16384.
    #[serde(default = "default_signature_allowance")]
    pub signature_allowance: usize,
    /// Write messages to ssmsend's outgoing queue (python-dirq `QueueSimple` layout).
    #[serde(default)]
    pub dirq: Option<DirqConfig>,
    /// Publish messages to ARGO AMS over its REST API.
    #[serde(default)]
    pub ams: Option<AmsConfig>,
}

/// The APEL database's character set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApelCharset {
    /// MySQL's `utf8` (`utf8mb3`): no characters beyond U+FFFF.
    #[default]
    Utf8,
    /// MySQL's `latin1`: U+0000 to U+00FF.
    Latin1,
}

impl From<ApelCharset> for super::safety::Charset {
    fn from(charset: ApelCharset) -> Self {
        match charset {
            ApelCharset::Utf8 => Self::Utf8mb3,
            ApelCharset::Latin1 => Self::Latin1,
        }
    }
}

/// `[accounting.apel.dirq]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirqConfig {
    /// The queue directory: ssmsend's `[messaging] path` (e.g. `/var/spool/apel/outgoing`).
    pub path: PathBuf,
}

/// `[accounting.apel.ams]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmsConfig {
    /// `https://host[:port]` of the AMS service (e.g. `https://msg.argo.grnet.gr`).
    pub endpoint: accelfed_net::HttpsUrl,
    /// The AMS project (e.g. `accounting`).
    pub project: String,
    /// The topic APEL reads accelerator messages from, as EGI's accounting team gives it.
    pub topic: String,
    /// A file holding the AMS key (one line, readable by the accelfed user only).
    pub token_file: PathBuf,
    /// A CA to trust besides the system's roots: a PEM file, or a folder of them such as
    /// `/etc/grid-security/certificates`.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// The site's host certificate (PEM), registered in GOCDB: each message is signed with it as
    /// ssmsend signs (`openssl smime -sign -text`); APEL's receiver refuses unsigned messages.
    #[serde(default)]
    pub certificate: Option<PathBuf>,
    /// The host certificate's private key (PEM, unencrypted, readable by the accelfed user only).
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// Send messages unsigned (only for a receiver that does not check signatures, e.g. a test
    /// AMS; EGI's repository rejects them). Excludes `certificate` and `key`.
    #[serde(default)]
    pub unsigned: bool,
    /// Seconds one request may take, whole: connecting, the TLS handshake, sending and the answer.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Requests per message before the run gives up (at least 1; retried on no answer, 429, 5xx).
    #[serde(default = "default_attempts")]
    pub attempts: u32,
}

fn default_max_message_bytes() -> usize {
    1_000_000
}
fn default_signature_allowance() -> usize {
    16_384
}
fn default_timeout_s() -> u64 {
    60
}
fn default_attempts() -> u32 {
    5
}
