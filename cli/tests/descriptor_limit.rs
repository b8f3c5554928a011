//! `accelfed serve` refuses `[listen.limits]` that need more file descriptors than the process may
//! ever open (issue #30: two ports of 512 reached the default 1,024 and the service went deaf at
//! EMFILE): exit 2, with the numbers, before anything is bound.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use accelfed_tests::pki::Pki;

#[test]
fn limits_past_the_descriptor_limit_are_refused_with_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    std::fs::write(dir.path().join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), &pki.key_pem).unwrap();
    // A billion connections on each of two ports: past any hard limit Linux allows (nr_open).
    std::fs::write(
        dir.path().join("central.toml"),
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
         [listen.limits]\nmax_connections = 1000000000\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["serve", "--config", "central.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("needs 2000000256 file descriptors (2 x max_connections 1000000000 + 256"),
        "{text}"
    );
    assert!(text.contains("hard limit"), "{text}");
    assert!(!text.contains("listening"), "nothing is bound: {text}");
}
