//! The web page in a real browser: headless Chromium (Debian `chromium`) against the whole service,
//! for the page's tests (`cli/tests/registry_web.rs`, `registry_web_answers.rs`).
//!
//! The server's certificate comes from a private test CA made for the run. Chromium reads trust
//! from an NSS database, and teaching a throw-away profile to trust the CA would need `certutil`
//! (another package) for no gain in what is tested: the TLS stack is the registry's own, tested
//! elsewhere. So the browser runs with `--ignore-certificate-errors`, in a temporary profile of
//! its own that nothing else uses.
//!
//! Without chromium it is installed with apt-get; under `CI=true` a missing chromium fails the
//! test (never a skip).

use std::path::{Path, PathBuf};
use std::process::Command;

use accelfed_testkit::pki::Pki;

use crate::central::{Server, sha256_hex};

pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Makes sure chromium is there (see the module comment).
pub fn ensure_chromium() {
    if Path::new(CHROMIUM).exists() {
        return;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{CHROMIUM} is missing and CI=true: apt-get install -y chromium (scripts/test does)"
    );
    let missing = || (!Path::new(CHROMIUM).exists()).then(|| CHROMIUM.to_owned());
    if let Err(why) = accelfed_testkit::apt::install(&["chromium"], missing) {
        panic!("installing chromium failed ({why}); install it: apt-get install -y chromium");
    }
}

/// Runs headless Chromium with `args` in a fresh profile; its standard output.
pub fn chromium(args: &[String]) -> String {
    ensure_chromium();
    let profile = tempfile::tempdir().expect("a temporary profile");
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--ignore-certificate-errors",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .expect("running chromium");
    assert!(
        output.status.success(),
        "chromium failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The DOM of `url` after load, as headless Chromium serializes it.
pub fn dom(url: &str) -> String {
    let text = chromium(&["--dump-dom".to_owned(), url.to_owned()]);
    assert!(text.contains("</html>"), "no page at {url}: {text}");
    text
}

/// [`dom`] from async code, on the blocking pool.
pub async fn page(url: String) -> String {
    tokio::task::spawn_blocking(move || dom(&url))
        .await
        .expect("the browser's task")
}

/// A full-page screenshot of `url` at `path`, `height` pixels tall.
pub fn screenshot(url: &str, path: &Path, height: u32) {
    chromium(&[
        format!("--window-size=1280,{height}"),
        format!("--screenshot={}", path.display()),
        url.to_owned(),
    ]);
    assert!(path.exists(), "no screenshot at {}", path.display());
    println!("screenshot: {}", path.display());
}

/// Where screenshots are kept, under the test's target directory (`CARGO_TARGET_TMPDIR`).
pub fn screenshots(target_tmpdir: &str) -> PathBuf {
    let dir = Path::new(target_tmpdir).join("registry-web-screenshots");
    std::fs::create_dir_all(&dir).expect("the screenshots' folder");
    dir
}

/// The whole service as `accelfed serve` assembles it, in `dir`: HTTPS on a free port with a test
/// CA's certificate, the accounting repository at `database`, and `sites` (name, token) allowed
/// to push. Returns it and the CA, which the test's registry client trusts.
pub fn web_service(dir: &Path, database: &Path, sites: &[(&str, &str)]) -> (Server, Pki) {
    let pki = Pki::generate();
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).expect("writing cert.pem");
    std::fs::write(dir.join("key.pem"), &pki.key_pem).expect("writing key.pem");
    let mut text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\npath = \"{}\"\n",
        database.display()
    );
    for (site, token) in sites {
        text.push_str(&format!(
            "[sites.{site}]\ntoken_sha256 = \"{}\"\n",
            sha256_hex(token)
        ));
    }
    let config = dir.join("central.toml");
    std::fs::write(&config, text).expect("writing central.toml");
    (Server::start(&config), pki)
}
