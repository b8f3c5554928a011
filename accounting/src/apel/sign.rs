//! Signing messages as SSM does: `openssl smime -sign -inkey KEY -signer CERT -text`, which
//! writes a detached `multipart/signed` S/MIME message whose first part is the text with a
//! `Content-Type: text/plain` header. APEL's receiver checks the signer against its CA
//! directory and the signature with `openssl smime -verify`; an unsigned message is refused
//! there ("Unverified signer").
//!
//! We run the `openssl` binary rather than link a CMS library: a site that runs SSM has it, the
//! output is byte for byte the format APEL's receiver was written against, and it reads any key
//! format and chain the host certificate comes in (docs/architecture.md, "APEL signing").

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::error::ApelError;

/// A probe message for measuring the signature's size: ASCII, no line break, like an APEL message.
const PROBE: &str = r#"{"Type":"APEL-accelerator-message","Version":"0.1","UsageRecords":[]}"#;

/// Room for what varies between two signatures by one key (an ECDSA signature's DER length).
const MARGIN: usize = 256;

/// The site's host certificate and key.
#[derive(Debug, Clone)]
pub struct Signer {
    certificate: PathBuf,
    key: PathBuf,
}

impl Signer {
    /// A signer for `certificate` and `key` (PEM files); checked by signing a probe, so a wrong
    /// path, an unreadable key or a key that does not match fails here, before any message.
    pub async fn new(certificate: PathBuf, key: PathBuf) -> Result<Self, ApelError> {
        let signer = Self { certificate, key };
        signer.sign(PROBE).await?;
        Ok(signer)
    }

    pub fn certificate(&self) -> &Path {
        &self.certificate
    }

    /// `message` signed, as SSM signs it.
    pub async fn sign(&self, message: &str) -> Result<String, ApelError> {
        let fail = |message: String| ApelError::Sign {
            certificate: self.certificate.clone(),
            message,
        };
        let mut child = Command::new("openssl")
            .args(["smime", "-sign", "-inkey"])
            .arg(&self.key)
            .arg("-signer")
            .arg(&self.certificate)
            .arg("-text")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| fail(format!("cannot run openssl: {err}")))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| fail("openssl has no standard input".to_owned()))?;
        let text = message.to_owned();
        // Written while the output is read, so a message larger than a pipe's buffer cannot stall.
        let writer = tokio::spawn(async move {
            let written = stdin.write_all(text.as_bytes()).await;
            drop(stdin);
            written
        });
        let output = child
            .wait_with_output()
            .await
            .map_err(|err| fail(format!("openssl failed: {err}")))?;
        let written = writer
            .await
            .map_err(|err| fail(format!("writing to openssl: {err}")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(fail(format!(
                "openssl smime -sign exited with {}: {}",
                output.status,
                stderr.trim()
            )));
        }
        written.map_err(|err| fail(format!("writing to openssl: {err}")))?;
        String::from_utf8(output.stdout)
            .map_err(|_| fail("openssl wrote a signed message that is not UTF-8".to_owned()))
    }

    /// Bytes the signature adds to a message (a line-break-free ASCII message, as APEL messages
    /// are), with a margin.
    pub async fn overhead(&self) -> Result<usize, ApelError> {
        let signed = self.sign(PROBE).await?;
        Ok(signed.len().saturating_sub(PROBE.len()) + MARGIN)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
