//! Against the real `openssl` binary: a test CA and a host certificate made with it, messages
//! signed by [`Signer`] and verified with `openssl smime -verify` as APEL's receiver does, and the
//! travelling size of a message filled to its budget.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;

use super::*;
use crate::apel::envelope;

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `ca.pem`, and `host.pem`/`host.key` signed by it.
fn test_ca(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=accelfed test CA",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "host.key",
            "-out",
            "host.csr",
            "-subj",
            "/DC=org/DC=example/CN=gpu.example.org",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "host.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "host.pem",
            "-days",
            "2",
        ],
    );
}

/// `openssl smime -verify` against the CA, as APEL's receiver checks (host certificates often
/// lack the S/MIME purpose, hence `-purpose any`); returns the verified content.
fn verify(dir: &Path, signed: &str) -> Result<String, String> {
    std::fs::write(dir.join("signed.txt"), signed).unwrap();
    let output = Command::new("openssl")
        .args(["smime", "-verify", "-CAfile", "ca.pem", "-purpose", "any"])
        .args(["-in", "signed.txt"])
        .current_dir(dir)
        .output()
        .unwrap();
    if output.status.success() {
        Ok(String::from_utf8(output.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[tokio::test]
async fn signed_messages_verify_against_the_ca_and_tampering_does_not() {
    let dir = tempfile::tempdir().unwrap();
    test_ca(dir.path());
    let signer = Signer::new(dir.path().join("host.pem"), dir.path().join("host.key"))
        .await
        .unwrap();
    let message =
        r#"{"Type":"APEL-accelerator-message","Version":"0.1","UsageRecords":[{"Count":0.5}]}"#;
    let signed = signer.sign(message).await.unwrap();
    assert!(signed.contains("multipart/signed"), "detached: {signed}");
    let content = verify(dir.path(), &signed).unwrap();
    // `-text` put a text/plain header before the message; the receiver strips it.
    let body = content.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert_eq!(body.trim_end(), message);

    let tampered = signed.replace(r#""Count":0.5"#, r#""Count":5.0"#);
    assert!(verify(dir.path(), &tampered).is_err());

    // A key that is not the certificate's is caught when the signer is made.
    openssl(
        dir.path(),
        &["genpkey", "-algorithm", "RSA", "-out", "other.key"],
    );
    let err = Signer::new(dir.path().join("host.pem"), dir.path().join("other.key"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("host.pem"), "{err}");
}

#[tokio::test]
async fn a_message_filled_to_its_budget_stays_under_the_limit_once_signed_and_encoded() {
    let dir = tempfile::tempdir().unwrap();
    test_ca(dir.path());
    let signer = Signer::new(dir.path().join("host.pem"), dir.path().join("host.key"))
        .await
        .unwrap();
    let overhead = signer.overhead().await.unwrap();
    assert!((1_000..10_000).contains(&overhead), "{overhead}");
    for limit in [envelope::DEFAULT_LIMIT, 200_000] {
        let budget = envelope::max_message_bytes(limit, overhead).unwrap();
        let filler = "x".repeat(budget - 21);
        let message = format!(r#"{{"UsageRecords":["{filler}"]}}"#);
        assert_eq!(message.len(), budget);
        let signed = signer.sign(&message).await.unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(signed.as_bytes());
        let request = envelope::ams_request_len(signed.len());
        assert_eq!(request, encoded.len() + envelope::ams_request_len(0));
        assert!(request <= limit, "{request} > {limit}");
        // Not wasteful either: within the margin and a few lines of the limit.
        assert!(request > limit - 2_000, "{request} far below {limit}");
    }
    // The issue's case: a 999,194-byte message is far over once signed and encoded.
    let signed = signer.sign(&"y".repeat(999_194)).await.unwrap();
    assert!(envelope::ams_request_len(signed.len()) > 1_300_000);
}
