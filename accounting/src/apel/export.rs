//! One export run: the spool's records that changed since the watermark (or all of them), page by
//! page in version order; each page checked against what APEL accepts ([`super::safety`]),
//! rendered as APEL messages within the byte budget that leaves room for the signature and AMS's
//! wrapping ([`super::envelope`]), and delivered; then the watermark moved to the page's last
//! version. Delivery happens before the watermark moves, so a crash or a failed delivery re-sends
//! on the next run rather than losing (APEL replaces by identity). Records refused by the check
//! are reported and passed over: they come back when they change.

use std::time::{SystemTime, UNIX_EPOCH};

use accelfed_schemas::render::apel::{self, MAX_RECORDS, Skipped};
use accelfed_schemas::usage::{Month, UsageRecord};

use super::ams::AmsClient;
use super::dirq::DirqQueue;
use super::envelope;
use super::error::ApelError;
use super::safety::{self, Charset, Refused};
use super::sign::Signer;
use super::watermark::Watermark;
use crate::spool::Spool;

/// Records read from the spool per page: a few messages' worth, so memory stays bounded.
const PAGE: usize = 5_000;

/// Where messages go.
#[derive(Debug)]
pub enum Destination {
    /// An `ssmsend` outgoing directory; ssmsend signs.
    Dirq(DirqQueue),
    /// ARGO AMS directly, each message signed with the site's host certificate, or (only where
    /// configured explicitly) unsigned.
    Ams {
        client: AmsClient,
        signer: Option<Signer>,
    },
}

impl Destination {
    async fn deliver(&self, message: &str, limit: usize) -> Result<String, ApelError> {
        match self {
            Self::Dirq(queue) => queue.add(message.as_bytes()),
            Self::Ams { client, signer } => {
                let signed = match signer {
                    Some(signer) => signer.sign(message).await?,
                    None => message.to_owned(),
                };
                let bytes = envelope::ams_request_len(signed.len());
                if bytes > limit {
                    return Err(ApelError::Envelope { bytes, limit });
                }
                client.publish(&signed, &empaid()).await
            }
        }
    }

    /// The largest APEL message whose travelling form stays within `limit` bytes: the signature
    /// measured with our signer, assumed `allowance` bytes where ssmsend signs, none when unsigned.
    pub async fn message_budget(&self, limit: usize, allowance: usize) -> Result<usize, ApelError> {
        let overhead = match self {
            Self::Dirq(_) => allowance,
            Self::Ams {
                signer: Some(signer),
                ..
            } => signer.overhead().await?,
            Self::Ams { signer: None, .. } => 0,
        };
        envelope::max_message_bytes(limit, overhead).ok_or_else(|| ApelError::Envelope {
            bytes: envelope::ams_request_len(overhead),
            limit,
        })
    }
}

/// How records are checked and packed.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions {
    /// The APEL database's character set.
    pub charset: Charset,
    /// Bytes per APEL message before signing and encoding ([`Destination::message_budget`]).
    pub max_message_bytes: usize,
    /// The limit the AMS request must stay within (checked again after signing).
    pub limit: usize,
}

/// Which records to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Those that changed since the watermark.
    SinceWatermark,
    /// Every record in the spool (a full resend; APEL replaces what it has).
    All,
}

/// What one run did.
#[derive(Debug, Default)]
pub struct ExportReport {
    /// Records delivered.
    pub records: usize,
    /// Messages delivered, with the name or id the destination gave each.
    pub messages: Vec<String>,
    /// Records APEL's loader or database would not take ([`super::safety`]). The watermark
    /// moves past them: they come back when they change.
    pub refused: Vec<Refused>,
    /// Records sent with a field normalised so APEL can store it.
    pub normalised: usize,
    /// Records that alone are larger than a message. The watermark moves past them too.
    pub skipped: Vec<Skipped>,
    /// The watermark after the run.
    pub watermark: i64,
}

/// Runs one export (see the module documentation).
pub async fn export(
    spool: &Spool,
    destination: &Destination,
    watermark: &Watermark,
    selection: Selection,
    options: ExportOptions,
) -> Result<ExportReport, ApelError> {
    let mut after = match selection {
        Selection::SinceWatermark => watermark.read()?,
        Selection::All => 0,
    };
    let mut report = ExportReport {
        watermark: watermark.read()?,
        ..ExportReport::default()
    };
    let mut checker = SpoolChecker::new(options.charset);
    loop {
        let page = spool.changed_after(after, PAGE)?;
        let Some(last) = page.last().map(|changed| changed.version) else {
            break;
        };
        let records: Vec<_> = page.into_iter().map(|changed| changed.record).collect();
        let checked = checker.check(spool, records)?;
        report.refused.extend(checked.refused);
        report.normalised += checked.normalised.len();
        let records = checked.records;
        let rendered = apel::render_with(&records, MAX_RECORDS, options.max_message_bytes);
        for skipped in &rendered.skipped {
            tracing::error!("not exported to APEL: {skipped}");
        }
        report.records += records.len() - rendered.skipped.len();
        report.skipped.extend(rendered.skipped);
        for message in &rendered.messages {
            let name = destination.deliver(message, options.limit).await?;
            tracing::debug!(message = %name, bytes = message.len(), "APEL message delivered");
            report.messages.push(name);
        }
        after = last;
        if last > report.watermark {
            watermark.write(last)?;
            report.watermark = last;
        }
    }
    Ok(report)
}

/// One checker for the run, so records that collide in APEL's key are found across pages,
/// seeded with each month's every stored record when the run first meets the month, so that the
/// same record holds a key whichever run it came in and collisions with what earlier runs sent
/// are found too.
struct SpoolChecker {
    checker: safety::Checker,
    seeded: std::collections::BTreeSet<Month>,
}

impl SpoolChecker {
    fn new(charset: Charset) -> Self {
        Self {
            checker: safety::Checker::new(charset),
            seeded: std::collections::BTreeSet::new(),
        }
    }

    /// One page's records checked, refusals and normalisations logged.
    fn check(
        &mut self,
        spool: &Spool,
        records: Vec<UsageRecord>,
    ) -> Result<safety::Checked, ApelError> {
        for record in &records {
            if self.seeded.insert(record.month) {
                let checker = &mut self.checker;
                spool.each_in_month(record.month, |stored| checker.seed(stored))?;
            }
        }
        let checked = self.checker.check(records);
        for refused in &checked.refused {
            tracing::error!("{refused}");
        }
        for normalised in &checked.normalised {
            tracing::warn!(
                record = %normalised.id,
                "APEL record {}, field {}: {}",
                normalised.resource,
                normalised.field,
                normalised.what
            );
        }
        Ok(checked)
    }
}

/// A message id in the form ssmsend gives messages from its queue (`<dir>/<element>`), for AMS's
/// `empaid` attribute.
fn empaid() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    format!(
        "{:08x}/{secs:08x}{:05x}{:01x}",
        secs - secs % 60,
        since.subsec_micros(),
        std::process::id() % 16
    )
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::gpu::GpuCount;
    use accelfed_schemas::usage::sample::record;

    use super::*;

    fn messages_in(queue: &std::path::Path) -> Vec<serde_json::Value> {
        let mut files = Vec::new();
        for dir in std::fs::read_dir(queue).unwrap() {
            for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
                files.push(file.unwrap().path());
            }
        }
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
            .collect()
    }

    const OPTIONS: ExportOptions = ExportOptions {
        charset: Charset::Utf8mb3,
        max_message_bytes: apel::MAX_BYTES,
        limit: envelope::DEFAULT_LIMIT,
    };

    /// One export of what changed since the watermark, as the test's three runs do.
    async fn export_changes(
        spool: &Spool,
        destination: &Destination,
        watermark: &Watermark,
    ) -> ExportReport {
        export(
            spool,
            destination,
            watermark,
            Selection::SinceWatermark,
            OPTIONS,
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn exports_what_changed_since_the_watermark_and_all_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
        let queue = dir.path().join("outgoing");
        let destination = Destination::Dirq(DirqQueue::open(&queue).unwrap());
        let watermark = Watermark::new(dir.path().join("apel.watermark"));
        let mut no_fqan = record("vm-x");
        no_fqan.fqan = None;
        no_fqan.vo = None;
        spool
            .write_run(&[record("vm-1"), record("vm-2"), no_fqan])
            .unwrap();

        let first = export_changes(&spool, &destination, &watermark).await;
        assert_eq!(first.records, 2);
        assert_eq!(first.messages.len(), 1);
        assert_eq!(first.refused.len(), 1);
        assert!(first.refused[0].to_string().contains("vm-x"));
        assert_eq!(watermark.read().unwrap(), first.watermark);

        // Nothing changed: nothing sent.
        let idle = export_changes(&spool, &destination, &watermark).await;
        assert!(idle.messages.is_empty());

        // A changed record goes again, alone.
        let mut grown = record("vm-2");
        grown.count = GpuCount::new(2.0).unwrap();
        spool.write_run(&[grown]).unwrap();
        let second = export_changes(&spool, &destination, &watermark).await;
        assert_eq!((second.records, second.messages.len()), (1, 1));
        let all = export(&spool, &destination, &watermark, Selection::All, OPTIONS)
            .await
            .unwrap();
        assert_eq!(all.records, 2);

        let messages = messages_in(&queue);
        let counts: Vec<usize> = messages
            .iter()
            .map(|m| m["UsageRecords"].as_array().unwrap().len())
            .collect();
        assert_eq!(counts, vec![2, 1, 2]);
        assert_eq!(messages[1]["UsageRecords"][0]["Count"], 2.0);
    }

    /// APEL keeps one row for keys equal but for case: a record colliding with one an earlier run
    /// sent is refused as one colliding within a run is, and the earlier one still goes when it
    /// changes.
    #[tokio::test]
    async fn a_record_colliding_with_one_sent_by_an_earlier_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
        let destination = Destination::Dirq(DirqQueue::open(dir.path().join("outgoing")).unwrap());
        let watermark = Watermark::new(dir.path().join("apel.watermark"));
        spool.write_run(&[record("GPU-Node-1")]).unwrap();
        assert_eq!(
            export_changes(&spool, &destination, &watermark)
                .await
                .records,
            1
        );

        spool.write_run(&[record("gpu-node-1")]).unwrap();
        let second = export_changes(&spool, &destination, &watermark).await;
        assert_eq!(second.records, 0);
        let [refused] = second.refused.as_slice() else {
            panic!("{:?}", second.refused)
        };
        let refused = refused.to_string();
        assert!(
            refused.contains("gpu-node-1") && refused.contains("\"GPU-Node-1\""),
            "{refused}"
        );

        let mut grown = record("GPU-Node-1");
        grown.count = GpuCount::new(2.0).unwrap();
        spool.write_run(&[grown]).unwrap();
        let third = export_changes(&spool, &destination, &watermark).await;
        assert_eq!((third.records, third.refused.len()), (1, 0));
    }
}
