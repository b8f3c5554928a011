//! One export run: the spool's records that changed since the watermark (or all of them), page by
//! page in version order; each page rendered as APEL messages and delivered; then the watermark
//! moved to the page's last version. Delivery happens before the watermark moves, so a crash or a
//! failed delivery re-sends on the next run rather than losing (APEL replaces by identity).

use std::time::{SystemTime, UNIX_EPOCH};

use accelfed_schemas::render::apel::{self, Skipped};

use super::ams::AmsClient;
use super::dirq::DirqQueue;
use super::error::ApelError;
use super::watermark::Watermark;
use crate::spool::Spool;

/// Records read from the spool per page: a few messages' worth, so memory stays bounded.
const PAGE: usize = 5_000;

/// Where messages go.
#[derive(Debug)]
pub enum Destination {
    /// An `ssmsend` outgoing directory.
    Dirq(DirqQueue),
    /// ARGO AMS directly.
    Ams(AmsClient),
}

impl Destination {
    async fn deliver(&self, message: &str) -> Result<String, ApelError> {
        match self {
            Self::Dirq(queue) => queue.add(message.as_bytes()),
            Self::Ams(client) => client.publish(message, &empaid()).await,
        }
    }
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
    /// Records APEL cannot take (no FQAN or VO; alone larger than a message). The watermark moves
    /// past them: they come back when they change.
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
) -> Result<ExportReport, ApelError> {
    let mut after = match selection {
        Selection::SinceWatermark => watermark.read()?,
        Selection::All => 0,
    };
    let mut report = ExportReport {
        watermark: watermark.read()?,
        ..ExportReport::default()
    };
    loop {
        let page = spool.changed_after(after, PAGE)?;
        let Some(last) = page.last().map(|changed| changed.version) else {
            break;
        };
        let records: Vec<_> = page.into_iter().map(|changed| changed.record).collect();
        let rendered = apel::render(&records);
        for skipped in &rendered.skipped {
            tracing::error!(record = %skipped.id, "not exported to APEL: {}", skipped.reason);
        }
        report.records += records.len() - rendered.skipped.len();
        report.skipped.extend(rendered.skipped);
        for message in &rendered.messages {
            let name = destination.deliver(message).await?;
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

        let first = export(&spool, &destination, &watermark, Selection::SinceWatermark)
            .await
            .unwrap();
        assert_eq!(first.records, 2);
        assert_eq!(first.messages.len(), 1);
        assert_eq!(first.skipped.len(), 1);
        assert_eq!(watermark.read().unwrap(), first.watermark);

        // Nothing changed: nothing sent.
        let idle = export(&spool, &destination, &watermark, Selection::SinceWatermark)
            .await
            .unwrap();
        assert!(idle.messages.is_empty());

        // A changed record goes again, alone.
        let mut grown = record("vm-2");
        grown.count = GpuCount::new(2.0).unwrap();
        spool.write_run(&[grown]).unwrap();
        let second = export(&spool, &destination, &watermark, Selection::SinceWatermark)
            .await
            .unwrap();
        assert_eq!((second.records, second.messages.len()), (1, 1));
        let all = export(&spool, &destination, &watermark, Selection::All)
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
}
