//! central.toml for the accounting tests: two sites (SITE-A and SITE-B) with the test tokens, TLS
//! from the test PKI, a database line and a gRPC address.

use std::path::{Path, PathBuf};

use crate::pki::PkiFiles;

pub const TOKEN_A: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
pub const TOKEN_B: &str = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";

/// A token's SHA-256, hex, as central.toml's `token_sha256` holds it.
pub fn sha256_hex(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes central.toml for `database` (`path = ...` or `url = ...` line) listening on `grpc`.
pub fn central_config(dir: &Path, pki: &PkiFiles, database: &str, grpc: &str) -> PathBuf {
    let path = dir.join("central.toml");
    std::fs::write(
        &path,
        format!(
            "[listen]\ngrpc = \"{grpc}\"\nmetrics = \"127.0.0.1:0\"\n\n\
             [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n\
             [database]\n{database}\n\n[ingest]\nmax_batch = 1000\n\n\
             [sites.SITE-A]\ntoken_sha256 = \"{}\"\n\n[sites.SITE-B]\ntoken_sha256 = \"{}\"\n",
            pki.cert.display(),
            pki.key.display(),
            sha256_hex(TOKEN_A),
            sha256_hex(TOKEN_B),
        ),
    )
    .expect("write central.toml");
    path
}
