//! Values refused where they are written: the exact line and column of a bad latitude, a zero
//! validity or timeout, Kubernetes settings, invalid UTF-8, names too long for LDAP IDs, cloud
//! projects without their ID or over their quota.

use super::*;

/// The whole message of `source`'s error, for checks that pin the exact position.
fn error_of(source: &str) -> String {
    match Config::parse(Path::new("site.toml"), source) {
        Ok(_) => panic!("accepted:\n{source}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn a_latitude_that_is_not_a_number_of_degrees_points_at_its_value() {
    for (latitude, shown) in [("nan", "NaN"), ("91", "91"), ("-90.5", "-90.5")] {
        let source = format!("[site]\nname = \"S\"\n[site.location]\nlatitude = {latitude}\n");
        assert_eq!(
            error_of(&source),
            format!(
                "site.toml:4:12: site.location.latitude: {shown} is not a number of degrees \
                 between -90 and 90"
            )
        );
    }
    let source = "[site]\nname = \"S\"\nlocation = { latitude = 50, longitude = inf }\n";
    assert_eq!(
        error_of(source),
        "site.toml:3:41: site.location.longitude: inf is not a number of degrees between -180 \
         and 180"
    );
}

#[test]
fn a_validity_of_zero_points_at_its_value() {
    assert_eq!(
        error_of("[site]\nname = \"S\"\nvalidity = 0\n"),
        "site.toml:3:12: site.validity: must be at least one second"
    );
}

#[test]
fn a_slurm_timeout_of_zero_points_at_its_value() {
    let source = "[site]\nname = \"S\"\n[[slurm]]\nid = \"hpc\"\n[slurm.cli]\ntimeout_s = 0\n";
    assert_eq!(
        error_of(source),
        "site.toml:6:13: slurm.cli.timeout_s: must be at least 1 second"
    );
    let source = "[site]\nname = \"S\"\n[[slurm]]\nid = \"hpc\"\n\
                  rest = { url = \"http://r:6820\", user = \"u\", token_file = \"/t\", timeout_s = 0 }\n";
    assert_eq!(
        error_of(source),
        "site.toml:5:76: slurm.rest.timeout_s: must be at least 1 second"
    );
}

#[test]
fn kubernetes_settings_that_cannot_work_point_at_their_value() {
    let table = "[site]\nname = \"S\"\n[[kubernetes]]\nid = \"k8s\"\n";
    for (extra, expected) in [
        (
            "service_account_dir = \"/sa\"\n",
            "site.toml:5:23: kubernetes.service_account_dir: only read with in_cluster = true",
        ),
        (
            "context = \"c\"\nin_cluster = true\n",
            "site.toml:6:14: kubernetes.in_cluster: in_cluster = true cannot be combined with \
             kubeconfig or context",
        ),
        (
            "timeout_s = 0\n",
            "site.toml:5:13: kubernetes.timeout_s: must be at least 1 second",
        ),
        (
            "vo_label = \"\"\n",
            "site.toml:5:12: kubernetes.vo_label: must not be empty",
        ),
        (
            "prometheus = { url = \"http://p:9090\", timeout_s = 0 }\n",
            "site.toml:5:51: kubernetes.prometheus.timeout_s: must be at least 1 second",
        ),
    ] {
        assert_eq!(error_of(&format!("{table}{extra}")), expected, "{extra}");
    }
}

#[test]
fn invalid_utf8_is_refused_at_its_first_bad_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.toml");
    let mut bytes = b"[site]\nname = \"S\"\ndescription = \"caf".to_vec();
    // Latin-1 "é" then more text: the bad byte is the 18th character of line 3 (after "caf").
    bytes.extend_from_slice(b"\xe9 et cr\xe8me\"\n[[slurm]]\nid = \"hpc\"\n");
    std::fs::write(&path, &bytes).unwrap();
    let message = Config::load(&path).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "{}:3:19: byte 0xe9 is not UTF-8 (TOML files are UTF-8 text)",
            path.display()
        )
    );
    // Columns count characters: valid multi-byte text before the bad byte is one column each.
    std::fs::write(&path, b"[site]\nname = \"\xc3\xa9\xc3\xa9\xff\"\n").unwrap();
    let message = Config::load(&path).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!("{}:2:11: byte 0xff", path.display())),
        "{message}"
    );
}

#[test]
fn names_that_make_ids_too_long_for_ldap_are_refused_where_they_are_written() {
    let long_site = "S".repeat(110);
    let source = format!("[site]\nname = \"{long_site}\"\n[site.location]\ncountry = \"CZ\"\n");
    let message = error_of(&source);
    assert!(
        message.starts_with("site.toml:2:8: site.name: Location ID urn:accelfed:SSS"),
        "{message}"
    );
    assert!(
        message.contains("more than the 240 a BDII's slapd stores"),
        "{message}"
    );

    let long_service = "h".repeat(200);
    let message = error_of(&GOOD.replacen("id = \"hpc\"", &format!("id = \"{long_service}\""), 1));
    assert!(
        message.starts_with("site.toml:6:6: static.batch[0].id: ComputingService ID"),
        "{message}"
    );
    // A name that fits is accepted.
    let fits = format!(
        "[site]\nname = \"{}\"\n[site.location]\ncountry = \"CZ\"\n",
        "S".repeat(90)
    );
    Config::parse(Path::new("site.toml"), &fits).unwrap();
}

/// Found by the site_config fuzz target: the registry refused the document of a cloud project
/// without project_id (its share had no ProjectID).
#[test]
fn a_cloud_project_without_its_project_id_is_refused_at_the_project() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let source = std::fs::read_to_string(&example).unwrap();
    let first = source
        .lines()
        .find(|line| line.starts_with("project_id"))
        .expect("examples/site.toml gives project ids");
    let without = source.replacen(first, "", 1);
    let project_line = without
        .lines()
        .position(|line| line == "[[static.cloud.project]]")
        .expect("examples/site.toml has a project")
        + 2;
    assert_mentions(
        &error_of(&without),
        &[
            &format!("site.toml:{project_line}:6: static.cloud[0].project[0]: project \"atlas\""),
            "needs project_id",
        ],
    );
}

/// Found by the site_config fuzz target: a project using more GPUs than its quota (or than its
/// pool has in use) made a share whose used GPUs exceeded its total, which the registry refuses.
#[test]
fn a_cloud_project_using_more_than_its_quota_or_its_pool_is_refused() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let source = std::fs::read_to_string(&example).unwrap();
    let project_line = source
        .lines()
        .position(|line| line == "[[static.cloud.project]]")
        .expect("examples/site.toml has a project")
        + 2;
    assert!(source.contains("max_gpus = 8\n") && source.contains("used_gpus = { a100-pt = 4 }"));
    let over_quota = source.replacen("max_gpus = 8\n", "max_gpus = 2\n", 1);
    assert_mentions(
        &error_of(&over_quota),
        &[
            &format!("site.toml:{project_line}:6: static.cloud[0].project[0].used_gpus"),
            "4 GPUs in use exceed the project's max_gpus, 2",
        ],
    );
    let over_pool = source.replacen(
        "used_gpus = { a100-pt = 4 }",
        "used_gpus = { a100-pt = 7 }",
        1,
    );
    assert_mentions(
        &error_of(&over_pool),
        &[
            &format!("site.toml:{project_line}:6: static.cloud[0].project[0].used_gpus"),
            "7 GPUs of pool \"a100-pt\" in use exceed the 6 the pool has in use",
        ],
    );
}
