//! What a run with failures still publishes: a failed backend leaves the others' services
//! published (and says whether a retry may help), a push that fails leaves the file written; an
//! incomplete run never replaces the last good document.

use accelfed_net::{HttpsUrl, Trust};
use accelfed_provider::Retry;
use accelfed_publishers::flow::{ProvideReport, Provided, Sent};
use accelfed_publishers::{PublishError, RegistryTarget};
use accelfed_schemas::render::Format;
use accelfed_schemas::render::ldif::Dit;

use super::{config, example, plan, run, saved, with_failing_slurm};

fn sent(report: &ProvideReport) -> &Sent {
    match &report.provided {
        Provided::Sent(sent) => sent,
        other => panic!("a document made and sent: {other:?}"),
    }
}

/// A registry address whose listener takes every connection and drops it at once; the task
/// stops with the test's runtime.
async fn dropping_registry() -> RegistryTarget {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((connection, _)) = listener.accept().await {
            drop(connection);
        }
    });
    RegistryTarget {
        urls: HttpsUrl::parse(&format!("https://127.0.0.1:{port}"))
            .unwrap()
            .into(),
        token: "site-token".to_owned(),
        trust: Trust::system(),
        timeout: std::time::Duration::from_secs(10),
    }
}

#[tokio::test]
async fn a_failed_backend_leaves_the_others_published_and_the_last_good_document_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (good, last) = saved(dir.path(), Format::Glue21Json, Dit::Resource).await;
    let config = config(&with_failing_slurm(&example(), dir.path()));
    let out = dir.path().join("partial.json");
    let report = run(&plan(
        &config,
        Format::Glue21Json,
        Dit::Resource,
        &out,
        &last,
    ))
    .await;

    assert_eq!(report.providers, 2);
    assert_eq!(report.failures.len(), 1, "{report:?}");
    let failure = &report.failures[0];
    assert!(failure.provider.starts_with("slurm"), "{failure:?}");
    // Commands missing where the file says: the configuration must change first.
    assert_eq!(failure.retry, Retry::WillNotHelp, "{failure:?}");
    assert!(!report.complete());

    let sent = sent(&report);
    assert!(matches!(&sent.written, Some(Ok(written)) if written.to == out.display().to_string()));
    assert!(
        sent.saved.is_none(),
        "an incomplete document is never saved as good"
    );
    let published: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let services = published["ComputingService"].as_array().unwrap();
    assert!(!services.is_empty(), "the static services: {published}");
    assert_eq!(sent.bytes, std::fs::read(&out).unwrap().len());
    assert_eq!(std::fs::read(&last).unwrap(), good);
}

#[tokio::test]
async fn a_failed_push_leaves_the_file_written_and_nothing_saved() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dropping_registry().await;
    let url = registry.urls.to_string();
    let config = config(&example());
    let out = dir.path().join("pushed.ldif");
    let last = dir.path().join("last-good");
    let mut plan = plan(&config, Format::LdifGlue20, Dit::Resource, &out, &last);
    plan.registry = Some(registry);
    let report = run(&plan).await;

    assert!(report.failures.is_empty(), "{report:?}");
    assert!(!report.complete());
    let sent = sent(&report);
    match &sent.pushed {
        Some(Err(PublishError::Registry(err))) => {
            assert!(err.to_string().contains(&url), "{err}");
        }
        other => panic!("a failed push: {other:?}"),
    }
    assert!(matches!(sent.written, Some(Ok(_))), "{sent:?}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with("dn: "), "{written}");
    assert!(sent.saved.is_none());
    assert!(!last.exists(), "a run whose push failed saves nothing");
}

#[tokio::test]
async fn a_push_alone_writes_nothing_and_never_falls_back_on_an_old_document() {
    let dir = tempfile::tempdir().unwrap();
    let (_, last) = saved(dir.path(), Format::Glue21Json, Dit::Resource).await;
    let config = config(&super::only_failing_slurm(dir.path()));
    let mut plan = plan(
        &config,
        Format::Glue21Json,
        Dit::Resource,
        &dir.path().join("x"),
        &last,
    );
    plan.write = None;
    plan.registry = Some(dropping_registry().await);
    let report = run(&plan).await;
    // With a registry, a run whose providers all failed still pushes what it has: the registry
    // judges freshness itself.
    let sent = sent(&report);
    assert!(matches!(sent.pushed, Some(Err(_))), "{sent:?}");
    assert!(sent.written.is_none() && sent.saved.is_none(), "{sent:?}");
    assert!(!report.complete());
}

#[tokio::test]
async fn a_file_that_cannot_be_written_is_reported_by_path_and_nothing_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&example());
    let out = dir.path().join("no-such-folder/site.json");
    let last = dir.path().join("last-good");
    let report = run(&plan(
        &config,
        Format::Glue21Json,
        Dit::Resource,
        &out,
        &last,
    ))
    .await;
    assert!(!report.complete());
    let sent = sent(&report);
    match &sent.written {
        Some(Err(err @ PublishError::File { path, .. })) => {
            assert_eq!(path, &out);
            assert!(
                err.to_string().contains("no-such-folder/site.json"),
                "{err}"
            );
        }
        other => panic!("a failed write: {other:?}"),
    }
    assert!(sent.saved.is_none() && !last.exists(), "{sent:?}");
}
