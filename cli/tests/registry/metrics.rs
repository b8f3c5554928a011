//! The central's `/metrics` for the registry and the sites: a push refused for an unknown token
//! is counted (and logged), an accepted one too; the sites' documents are counted fresh and
//! their age given; and after a restart of the service on the same databases the registry's
//! series are back (the index is loaded from the store) and a configured site that never called
//! has its per-site series (last contact 0).

use super::*;

fn value(metrics: &str, series: &str) -> Option<String> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{series} ")))
        .map(str::to_owned)
}

#[test]
fn registry_pushes_are_counted_and_the_series_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let config = central_config(dir.path(), &pki);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "https = \"127.0.0.1:0\"\n",
            "https = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n",
        ),
    )
    .unwrap();
    let server = Server::start(&config);
    let (cloud, _) = sites(dir.path());
    let token_a = dir.path().join("a.token");
    std::fs::write(&token_a, format!("{TOKEN_A}\n")).unwrap();
    let stranger = dir.path().join("stranger.token");
    std::fs::write(&stranger, format!("{}\n", "c3".repeat(32))).unwrap();

    let refused = push(&server, &pki, &cloud, &stranger);
    assert!(!refused.status.success(), "{}", stderr(&refused));
    let pushed = push(&server, &pki, &cloud, &token_a);
    assert!(pushed.status.success(), "{}", stderr(&pushed));

    let metrics = server.metrics();
    for (series, want) in [
        ("accelfed_registry_pushes_accepted_total", "1"),
        (
            "accelfed_registry_pushes_refused_total{reason=\"unauthorized\"}",
            "1",
        ),
        ("accelfed_registry_sites{state=\"fresh\"}", "1"),
        ("accelfed_registry_sites{state=\"stale\"}", "0"),
        (
            "accelfed_registry_document_fresh{site=\"EXAMPLE-GPU\"}",
            "1",
        ),
        ("accelfed_site_configured{site=\"EXAMPLE-HPC\"}", "1"),
        (
            "accelfed_site_last_contact_timestamp_seconds{site=\"EXAMPLE-HPC\"}",
            "0",
        ),
        ("accelfed_records_ingested_total{site=\"EXAMPLE-HPC\"}", "0"),
    ] {
        assert_eq!(
            value(&metrics, series).as_deref(),
            Some(want),
            "{series} in\n{metrics}"
        );
    }
    let age: i64 = value(
        &metrics,
        "accelfed_registry_document_age_seconds{site=\"EXAMPLE-GPU\"}",
    )
    .and_then(|v| v.parse().ok())
    .unwrap_or_else(|| panic!("no document age in\n{metrics}"));
    assert!((0..60).contains(&age), "{age}");
    let build = metrics
        .lines()
        .find(|line| line.starts_with("accelfed_build_info{version=\""))
        .unwrap_or_else(|| panic!("no build info in\n{metrics}"));
    assert!(
        build.contains(",commit=\"") && build.ends_with("} 1"),
        "{build}"
    );
    assert!(
        value(&metrics, "process_resident_memory_bytes").is_some(),
        "{metrics}"
    );

    // A restart: the registry's documents come back from the store; the per-process push
    // counters start again, the configured sites keep their series.
    server.stop().unwrap();
    let server = Server::start(&config);
    let metrics = server.metrics();
    for (series, want) in [
        ("accelfed_registry_sites{state=\"fresh\"}", "1"),
        ("accelfed_registry_pushes_accepted_total", "0"),
        (
            "accelfed_registry_pushes_refused_total{reason=\"unauthorized\"}",
            "0",
        ),
        (
            "accelfed_site_last_contact_timestamp_seconds{site=\"EXAMPLE-HPC\"}",
            "0",
        ),
    ] {
        assert_eq!(
            value(&metrics, series).as_deref(),
            Some(want),
            "{series} in\n{metrics}"
        );
    }
}
