//! Keep-last-good: a complete document is saved with a record of its format and layout; a run
//! that makes nothing publishes it instead, byte for byte, only to a consumer of that format and
//! layout, and says why it did not.

use accelfed_publishers::flow::{Checked, Kept, LastGood, Provided};
use accelfed_schemas::render::Format;
use accelfed_schemas::render::ldif::Dit;

use super::{config, only_failing_slurm, plan, run, saved};

/// The last good document's fate in a run whose every provider failed, writing `format` and
/// `dit` to `dir/broken.out`.
async fn when_every_provider_fails(dir: &std::path::Path, format: Format, dit: Dit) -> LastGood {
    let config = config(&only_failing_slurm(dir));
    let out = dir.join("broken.out");
    let report = run(&plan(&config, format, dit, &out, &dir.join("last-good"))).await;
    assert!(!report.complete());
    assert_eq!(report.failures.len(), 1, "{report:?}");
    match report.provided {
        Provided::NothingGathered {
            last_good: Some(last_good),
        } => last_good,
        other => panic!("nothing gathered, with the last good document's fate: {other:?}"),
    }
}

#[tokio::test]
async fn a_run_that_gathers_nothing_publishes_the_saved_document_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (document, last) = saved(dir.path(), Format::Glue21Json, Dit::Resource).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("last-good.format")).unwrap(),
        "format=glue21-json\n"
    );
    let kept = when_every_provider_fails(dir.path(), Format::Glue21Json, Dit::Resource).await;
    assert!(
        matches!(kept.kept, Kept::Published { bytes, checked: Checked::ByRecord } if bytes == document.len()),
        "{kept:?}"
    );
    assert_eq!(kept.path, last);
    assert_eq!(
        std::fs::read(dir.path().join("broken.out")).unwrap(),
        document
    );
    // The failed run did not replace the good document.
    assert_eq!(std::fs::read(&last).unwrap(), document);
}

#[tokio::test]
async fn without_a_saved_document_nothing_is_published_and_the_report_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let kept = when_every_provider_fails(dir.path(), Format::Glue21Json, Dit::Resource).await;
    assert!(
        matches!(&kept.kept, Kept::Absent(err) if err.kind() == std::io::ErrorKind::NotFound),
        "{kept:?}"
    );
    assert!(!dir.path().join("broken.out").exists());
}

#[tokio::test]
async fn a_glue21_ldif_never_reaches_a_glue20_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let (document, _) = saved(dir.path(), Format::LdifGlue21, Dit::Resource).await;
    let glue20 = when_every_provider_fails(dir.path(), Format::LdifGlue20, Dit::Resource).await;
    assert!(
        matches!(&glue20.kept, Kept::Refused(why) if why.contains("not a ldif-glue20 document")
            && why.contains("saved as `format=ldif-glue21 dit=resource`")),
        "{glue20:?}"
    );
    assert!(!dir.path().join("broken.out").exists(), "nothing published");
    let glue21 = when_every_provider_fails(dir.path(), Format::LdifGlue21, Dit::Resource).await;
    assert!(matches!(glue21.kept, Kept::Published { .. }), "{glue21:?}");
    assert_eq!(
        std::fs::read(dir.path().join("broken.out")).unwrap(),
        document
    );
}

#[tokio::test]
async fn the_site_layout_never_reaches_a_resource_bdii() {
    let dir = tempfile::tempdir().unwrap();
    saved(dir.path(), Format::LdifGlue20, Dit::Site).await;
    let resource = when_every_provider_fails(dir.path(), Format::LdifGlue20, Dit::Resource).await;
    assert!(
        matches!(&resource.kept, Kept::Refused(why) if why.contains("not in the resource DIT layout")),
        "{resource:?}"
    );
    let site = when_every_provider_fails(dir.path(), Format::LdifGlue20, Dit::Site).await;
    assert!(matches!(site.kept, Kept::Published { .. }), "{site:?}");
}

#[tokio::test]
async fn without_a_record_only_the_content_is_checked_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    saved(dir.path(), Format::LdifGlue21, Dit::Resource).await;
    let record = dir.path().join("last-good.format");
    std::fs::remove_file(&record).unwrap();
    // The example publishes accelerator classes: its content shows it is GLUE 2.1 ...
    let glue20 = when_every_provider_fails(dir.path(), Format::LdifGlue20, Dit::Resource).await;
    assert!(
        matches!(&glue20.kept, Kept::Refused(why) if why.contains("holds GLUE 2.1 classes")),
        "{glue20:?}"
    );
    // ... and its DNs the resource layout.
    let site = when_every_provider_fails(dir.path(), Format::LdifGlue21, Dit::Site).await;
    assert!(
        matches!(&site.kept, Kept::Refused(why) if why.contains("entries are in the resource layout")),
        "{site:?}"
    );
    let fits = when_every_provider_fails(dir.path(), Format::LdifGlue21, Dit::Resource).await;
    assert!(
        matches!(&fits.kept, Kept::Published { checked: Checked::ByContentOnly { record: at }, .. } if *at == record),
        "{fits:?}"
    );
}
