//! The OS family of cloud instance types: a site states it in its configuration (a static flavor's
//! `os_family`, an OpenStack cloud's `os_family`) when images do not say; it is published in the
//! GLUE 2.1 JSON (`OSFamily`) and LDIF, and as GLUE 2.0's `GLUE2ExecutionEnvironmentOSFamily`,
//! ahead of what the images suggest. A value outside GLUE2's OSFamily is refused at its position.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use accelfed_provider::config::Config;
use accelfed_schemas::render::{self, Format};

/// examples/site.toml with its first flavor (`g1.a100x1`) given `os_family = <value>`.
fn example_with(value: &str) -> String {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let source = std::fs::read_to_string(example).unwrap();
    let flavor = "[[static.cloud.flavor]]\nid = \"g1.a100x1\"\n";
    assert!(source.contains(flavor), "examples/site.toml changed");
    source.replacen(flavor, &format!("{flavor}os_family = {value}\n"), 1)
}

/// LDIF text with its folded lines joined (RFC 2849: a continuation starts with one space).
fn unfolded(ldif: Vec<u8>) -> String {
    String::from_utf8(ldif).unwrap().replace("\n ", "")
}

/// The LDIF entry (its lines) whose DN starts with `rdn`.
fn entry<'a>(ldif: &'a str, rdn: &str) -> Vec<&'a str> {
    ldif.split("\n\n")
        .find(|entry| entry.starts_with(&format!("dn: {rdn}")))
        .unwrap_or_else(|| panic!("no entry {rdn}"))
        .lines()
        .collect()
}

#[tokio::test]
async fn a_configured_family_is_published_in_json_and_ldif_ahead_of_the_images() {
    let config = Config::parse(Path::new("site.toml"), &example_with("\"Windows\"")).unwrap();
    let gathered = accelfed_provider::gather(&config, chrono::Utc::now())
        .await
        .unwrap();
    let snapshot = &gathered.snapshot;

    let json: serde_json::Value = serde_json::from_slice(&render::json::render(snapshot)).unwrap();
    let families: Vec<(&str, Option<&str>)> = json["CloudComputingInstanceType"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flavor| {
            (
                flavor["Name"].as_str().unwrap(),
                flavor["OSFamily"].as_str(),
            )
        })
        .collect();
    // Written lower case; unstated on the other flavors (JSON carries only what the site said).
    assert_eq!(
        families,
        [
            ("g1.a100x1", Some("windows")),
            ("g1.a100x4", None),
            ("m1.large", None)
        ]
    );

    // GLUE 2.0: the configured value, although the Ubuntu image makes the others linux.
    let ldif = unfolded(render::render(snapshot, Format::LdifGlue20));
    let family_of = |flavor: &str| -> Vec<String> {
        let rdn_prefix = "GLUE2ResourceID=urn:accelfed:EXAMPLE-GPU:instance-type:";
        let rdn = format!("{rdn_prefix}cloud/{flavor},");
        entry(&ldif, &rdn)
            .into_iter()
            .filter(|line| line.starts_with("GLUE2ExecutionEnvironmentOSFamily:"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        family_of("g1.a100x1"),
        ["GLUE2ExecutionEnvironmentOSFamily: windows"]
    );
    assert_eq!(
        family_of("m1.large"),
        ["GLUE2ExecutionEnvironmentOSFamily: linux"]
    );

    // GLUE 2.1 LDIF has no OSFamily attribute for an instance type: it goes to OtherInfo.
    let ldif21 = unfolded(render::render(snapshot, Format::LdifGlue21));
    assert!(
        ldif21
            .lines()
            .any(|line| line == "GLUE2EntityOtherInfo: OSFamily=windows"),
        "{ldif21}"
    );
}

#[test]
fn a_family_outside_glue2s_list_is_refused_at_its_position() {
    let source = example_with("\"ubuntu\"");
    let line = source
        .lines()
        .position(|line| line == "os_family = \"ubuntu\"")
        .unwrap()
        + 1;
    let message = Config::parse(Path::new("site.toml"), &source)
        .unwrap_err()
        .to_string();
    for part in [
        format!("site.toml:{line}:13"),
        "\"ubuntu\" is not a GLUE2 OSFamily (one of linux, macosx, windows, solaris)".to_owned(),
    ] {
        assert!(message.contains(&part), "{message:?} lacks {part:?}");
    }
}
