//! `[publish.registry]` in the site's file instead of the `--registry-*` flags, against the
//! central service (in-process): `provide --publish registry` alone pushes (token file relative to the
//! configuration file); a flag overrides its key and its URL is checked by the same rule; without
//! `--publish` the document still goes to standard output; a bad URL in the table is a
//! configuration error at its line.

use std::path::Path;

use accelfed_tests::central::{TOKEN_A, accelfed, stderr};
use accelfed_tests::pki::pki;

use super::{Server, central_config, example, query, summary};

/// The example site's batch part (site EXAMPLE-GPU) with `publish` appended.
fn site_with(dir: &Path, publish: &str) -> std::path::PathBuf {
    let text = example("site.toml");
    let cut = text.find("[[static.cloud]]").unwrap();
    let path = dir.join("site.toml");
    std::fs::write(&path, format!("{}\n{publish}", &text[..cut])).unwrap();
    path
}

#[test]
fn provide_pushes_where_the_publish_registry_table_says() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let server = Server::start(&central_config(dir.path(), &pki));
    std::fs::write(dir.path().join("a.token"), format!("{TOKEN_A}\n")).unwrap();
    let table = |url: &str| {
        format!(
            "[publish.registry]\nurl = \"{url}\"\ntoken_file = \"a.token\"\nca = \"{}\"\n",
            pki.ca.display()
        )
    };

    // No flags: everything from the table; the relative token file is found beside the file.
    let config = site_with(dir.path(), &table(&server.url()));
    let pushed = accelfed()
        .args(["provide", "--publish", "registry", "--config"])
        .arg(&config)
        .current_dir("/")
        .output()
        .unwrap();
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    assert!(pushed.stdout.is_empty());
    let offers = summary(&query(&server, &pki, &["--site", "EXAMPLE-GPU"]));
    assert!(
        offers
            .iter()
            .any(|offer| offer.0 == "EXAMPLE-GPU" && offer.1 == "A100 nodes"),
        "{offers:?}"
    );

    // With -o the same gathering also goes to the file, in --format (the registry gets its JSON):
    // one provide run for the registry and a BDII.
    let ldif = dir.path().join("site.ldif");
    let both = accelfed()
        .args([
            "provide",
            "--publish",
            "registry",
            "--format",
            "ldif-glue20",
            "-o",
        ])
        .arg(&ldif)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert!(both.status.success(), "{}", stderr(&both));
    assert!(both.stdout.is_empty());
    let written = std::fs::read_to_string(&ldif).unwrap();
    assert!(
        written.contains("dn: GLUE2DomainID=EXAMPLE-GPU"),
        "{written}"
    );
    assert!(
        stderr(&both).contains("pushed to the registry"),
        "{}",
        stderr(&both)
    );

    // The table names a registry that is not there; --registry-url overrides it.
    let config = site_with(dir.path(), &table("https://127.0.0.1:9"));
    let pushed = accelfed()
        .args(["provide", "--publish", "registry", "--config"])
        .arg(&config)
        .args(["--registry-url", &server.url()])
        .output()
        .unwrap();
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let unreachable = accelfed()
        .args(["provide", "--publish", "registry", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(
        unreachable.status.code(),
        Some(1),
        "{}",
        stderr(&unreachable)
    );
    assert!(
        stderr(&unreachable).contains("registry https://127.0.0.1:9/registry/v1/document"),
        "{}",
        stderr(&unreachable)
    );

    // A flag's URL is held to the same rule, before anything is gathered.
    let refused = accelfed()
        .args(["provide", "--publish", "registry", "--config"])
        .arg(&config)
        .args(["--registry-url", "http://localhost:8443"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused)
            .contains("--registry-url: \"http://localhost:8443\" must be an https:// URL"),
        "{}",
        stderr(&refused)
    );

    // Without --publish the table publishes nothing: the document goes to standard output.
    let printed = accelfed()
        .args(["provide", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(printed.status.success(), "{}", stderr(&printed));
    serde_json::from_slice::<serde_json::Value>(&printed.stdout).unwrap();

    // An http:// URL is refused before anything is gathered, at its line and column.
    let config = site_with(dir.path(), &table("http://localhost:8443"));
    let line = std::fs::read_to_string(&config)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, line)| line.starts_with("url = "))
        .last()
        .unwrap()
        .0
        + 1;
    for command in ["validate", "provide"] {
        let refused = accelfed()
            .args([command, "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2), "{command}");
        assert!(
            stderr(&refused).contains(&format!(
                "site.toml:{line}:7: publish.registry.url: \"http://localhost:8443\" must be an https:// URL"
            )),
            "{command}: {}",
            stderr(&refused)
        );
    }
}
