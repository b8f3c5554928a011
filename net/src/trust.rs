//! What every client of the project trusts: the system's roots plus, where a setting names one
//! (`accounting.ship.ca`, `publish.registry.ca`, `query --ca`, `accounting.apel.ams.ca`,
//! slurmrestd's `rest.ca`, Prometheus' `ca_file`, Keystone's `cacert`), one PEM file or a folder
//! of them laid out as IGTF's `/etc/grid-security/certificates` is (`<hash>.0` files, often links to `<name>.pem`, beside
//! CRLs `<hash>.r0`, `.signing_policy`, `.namespaces` and `.info` files). Every certificate found
//! is passed on as one PEM bundle, each certificate once; nothing else (keys, CRLs) is.

use std::collections::BTreeSet;
use std::path::Path;

use base64::Engine;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The roots a client trusts: the system's, plus the certificates of a CA file or folder. Built
/// when the configuration is read, so a bad CA file is a configuration error before any call.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// The extra certificates, as one PEM bundle (each certificate once).
    extra: Option<Vec<u8>>,
}

impl Trust {
    /// The system's roots alone.
    pub fn system() -> Self {
        Self::default()
    }

    /// The system's roots plus the certificates of `path` (a file or an IGTF folder), which the
    /// setting `what` names (for messages).
    pub fn with_ca(what: &str, path: &Path) -> Result<Self, String> {
        read_ca(what, path).map(Self::from_pem)
    }

    /// [`Trust::with_ca`] where a CA is configured, else [`Trust::system`].
    pub fn optional(what: &str, path: Option<&Path>) -> Result<Self, String> {
        path.map_or_else(|| Ok(Self::system()), |path| Self::with_ca(what, path))
    }

    /// The system's roots plus the certificates of `pem` (already read).
    pub fn from_pem(pem: Vec<u8>) -> Self {
        Self { extra: Some(pem) }
    }

    /// The certificates trusted besides the system's roots, as PEM.
    pub fn extra_pem(&self) -> Option<&[u8]> {
        self.extra.as_deref()
    }
}

/// The certificates' count, not their bytes: a trust may end up in a debug log.
impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let extra = self
            .extra
            .as_deref()
            .map(|pem| CertificateDer::pem_slice_iter(pem).count());
        f.debug_struct("Trust")
            .field("system_roots", &true)
            .field("extra_certificates", &extra)
            .finish()
    }
}

/// The certificates of the file or folder `path`, as PEM; the setting `what` (for messages).
pub fn read_ca(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    let named = |message: String| format!("{what} {}: {message}", path.display());
    let metadata = std::fs::metadata(path).map_err(|err| named(err.to_string()))?;
    let mut found = BTreeSet::new();
    if metadata.is_dir() {
        read_folder(path, &mut found).map_err(named)?;
        if found.is_empty() {
            return Err(named(
                "no CA certificate in the folder (read *.pem, *.crt, *.cer and hashed names such \
                 as 1234abcd.0)"
                    .to_owned(),
            ));
        }
    } else {
        let pem = std::fs::read(path).map_err(|err| named(err.to_string()))?;
        certificates(&pem, &mut found).map_err(named)?;
        if found.is_empty() {
            return Err(named("no PEM certificate in the file".to_owned()));
        }
    }
    Ok(bundle(&found))
}

/// Every certificate file of the folder; files of other kinds are passed over by their names.
fn read_folder(folder: &Path, found: &mut BTreeSet<Vec<u8>>) -> Result<(), String> {
    let entries = std::fs::read_dir(folder).map_err(|err| err.to_string())?;
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_certificate_name)
        })
        .collect();
    names.sort();
    for file in names {
        // A link pointing nowhere (an IGTF update in progress) is passed over, as a folder is.
        if !file.is_file() {
            continue;
        }
        let pem = std::fs::read(&file).map_err(|err| format!("{}: {err}", file.display()))?;
        if let Err(err) = certificates(&pem, found) {
            tracing::warn!(file = %file.display(), "not read as a CA certificate: {err}");
        }
    }
    Ok(())
}

/// `*.pem`, `*.crt`, `*.cer`, and OpenSSL's hashed names (`1234abcd.0`); not CRLs (`1234abcd.r0`),
/// `.signing_policy`, `.namespaces`, `.info` or keys.
fn is_certificate_name(name: &str) -> bool {
    let Some((stem, extension)) = name.rsplit_once('.') else {
        return false;
    };
    matches!(extension, "pem" | "crt" | "cer")
        || (stem.len() == 8
            && stem.bytes().all(|b| b.is_ascii_hexdigit())
            && !extension.is_empty()
            && extension.bytes().all(|b| b.is_ascii_digit()))
}

/// The `CERTIFICATE` sections of `pem` (others, such as keys and CRLs, are skipped).
fn certificates(pem: &[u8], found: &mut BTreeSet<Vec<u8>>) -> Result<(), String> {
    for certificate in CertificateDer::pem_slice_iter(pem) {
        let certificate = certificate.map_err(|err| format!("not PEM: {err}"))?;
        found.insert(certificate.as_ref().to_vec());
    }
    Ok(())
}

fn bundle(found: &BTreeSet<Vec<u8>>) -> Vec<u8> {
    let mut pem = String::new();
    for der in found {
        pem.push_str("-----BEGIN CERTIFICATE-----\n");
        let text = base64::engine::general_purpose::STANDARD.encode(der);
        for line in text.as_bytes().chunks(64) {
            pem.push_str(&String::from_utf8_lossy(line));
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE-----\n");
    }
    pem.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca_pem(name: &str) -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.self_signed(&key).unwrap().pem()
    }

    fn count(pem: &[u8]) -> usize {
        CertificateDer::pem_slice_iter(pem).count()
    }

    #[test]
    fn names_of_an_igtf_folder() {
        for name in ["1234abcd.0", "0a1b2c3d.1", "AccelCA.pem", "x.crt", "x.cer"] {
            assert!(is_certificate_name(name), "{name}");
        }
        for name in [
            "1234abcd.r0",
            "1234abcd.signing_policy",
            "1234abcd.namespaces",
            "AccelCA.info",
            "AccelCA.crl_url",
            "ca.key",
            "README",
            "123.0",
        ] {
            assert!(!is_certificate_name(name), "{name}");
        }
    }

    #[test]
    fn a_folder_gives_every_certificate_once_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (ca_pem("CA A"), ca_pem("CA B"));
        std::fs::write(dir.path().join("CA-A.pem"), &a).unwrap();
        std::os::unix::fs::symlink("CA-A.pem", dir.path().join("1234abcd.0")).unwrap();
        std::fs::write(dir.path().join("0badf00d.0"), &b).unwrap();
        std::fs::write(
            dir.path().join("0badf00d.r0"),
            "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("0badf00d.signing_policy"),
            "access_id_CA X509 '/CN=B'\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("0badf00d.namespaces"),
            "TO Issuer \"/CN=B\"\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("gone.pem", dir.path().join("deadbeef.0")).unwrap();
        let pem = read_ca("accounting.ship.ca", dir.path()).unwrap();
        assert_eq!(count(&pem), 2);
        let one = read_ca("accounting.ship.ca", &dir.path().join("CA-A.pem")).unwrap();
        assert_eq!(count(&one), 1);
    }

    #[test]
    fn a_folder_or_file_without_certificates_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("0badf00d.signing_policy"), "x").unwrap();
        let err = read_ca("--ca", dir.path()).unwrap_err();
        assert!(
            err.starts_with(&format!("--ca {}: no CA certificate", dir.path().display())),
            "{err}"
        );
        let file = dir.path().join("empty.pem");
        std::fs::write(&file, "nothing\n").unwrap();
        let err = read_ca("--ca", &file).unwrap_err();
        assert!(err.contains("empty.pem: no PEM certificate"), "{err}");
        let err = read_ca("--ca", &dir.path().join("missing")).unwrap_err();
        assert!(err.contains("missing"), "{err}");
    }
}
