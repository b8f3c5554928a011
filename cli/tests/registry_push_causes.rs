//! `accelfed provide --publish registry` against a registry whose certificate the site does not
//! trust: the error names the certificate problem and says a retry will not help (reqwest's TLS
//! layer wraps the handshake's error in another I/O error, which once hid it), and the run exits 1
//! after one connection.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use accelfed_tests::central::TOKEN_A;
use accelfed_tests::pki::{Pki, counting_tls_server, unrelated_ca_pem};

#[test]
fn a_registry_signed_by_an_unknown_ca_is_named_and_not_worth_retrying() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let port = runtime.block_on(counting_tls_server(&Pki::generate(), connections.clone()));
    let trusted = dir.path().join("ca.pem");
    std::fs::write(&trusted, unrelated_ca_pem("a CA the registry does not use")).unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{TOKEN_A}\n")).unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");

    let pushed = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["provide", "--publish", "registry", "--config"])
        .arg(&example)
        .arg("--registry-url")
        .arg(format!("https://localhost:{port}"))
        .arg("--registry-token-file")
        .arg(&token)
        .arg("--registry-ca")
        .arg(&trusted)
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&pushed.stderr);
    assert_eq!(pushed.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("invalid peer certificate"), "{stderr}");
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");
    assert!(stderr.contains("retry will not help"), "{stderr}");
    assert!(
        !stderr.contains(TOKEN_A),
        "the token is never shown: {stderr}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 1, "{stderr}");
}
