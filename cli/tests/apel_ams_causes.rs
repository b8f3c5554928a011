//! `accelfed export` to ARGO AMS when the server's certificate is not one the site trusts: the
//! error names the certificate problem (not only "error sending request"), the run stops at the
//! first attempt instead of retrying (no wait cures a certificate) and exits 2, a configuration
//! error. The AMS key, which travels in the URL, appears nowhere in the output.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use accelfed_tests::pki::{Pki, counting_tls_server, unrelated_ca_pem};

const KEY: &str = "never-in-a-log-7f3a";

/// A site with one manual record whose AMS is `https://localhost:<port>`, trusting `ca` only.
fn site(dir: &Path, port: u16, ca: &Path) -> std::path::PathBuf {
    std::fs::write(
        dir.join("usage.jsonl"),
        r#"{"resource": "vm-1", "model": "H100", "count": 1, "vo": "cms", "start": "2026-02-01T00:00:00Z", "end": "2026-02-01T02:00:00Z"}"#.to_owned() + "\n",
    )
    .unwrap();
    std::fs::write(dir.join("ams.key"), format!("{KEY}\n")).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"SITE-B\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
             observations = \"usage.jsonl\"\n\n[accounting.apel.ams]\n\
             endpoint = \"https://localhost:{port}\"\nproject = \"accounting\"\n\
             topic = \"gLite-APEL\"\ntoken_file = \"ams.key\"\nca = \"{}\"\nattempts = 4\n\
             timeout_s = 10\nunsigned = true\n",
            ca.display()
        ),
    )
    .unwrap();
    config
}

fn accelfed(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .arg("--config")
        .arg(config)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

#[test]
fn a_server_signed_by_an_unknown_ca_is_named_and_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let served = Pki::generate();
    // The site trusts a CA of another name, so the server's issuer is not found at all.
    let trusted = dir.path().join("trusted-ca.pem");
    std::fs::write(&trusted, unrelated_ca_pem("a CA the server does not use")).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let port = runtime.block_on(counting_tls_server(&served, connections.clone()));
    let config = site(dir.path(), port, &trusted);
    let metered = accelfed(&["meter", "--since", "2026-01-01"], &config);
    assert!(metered.status.success(), "{metered:?}");

    let exported = accelfed(&["export"], &config);
    let stderr = String::from_utf8_lossy(&exported.stderr);
    assert_eq!(exported.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("invalid peer certificate"), "{stderr}");
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");
    assert!(stderr.contains("retry will not help"), "{stderr}");
    assert!(!stderr.contains("a retry may help"), "{stderr}");
    assert!(!stderr.contains(KEY), "the key is never shown: {stderr}");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "one attempt of the 4 allowed: {stderr}"
    );
}
