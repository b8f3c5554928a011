//! `provide`'s summary line at the default level: what a cron mail or a service's journal shows of
//! a run that went well. It names the site, how many services and GPUs the document publishes (in
//! physical GPUs and in scheduler slots, as the snapshot counts them), where it went and how long
//! the run took.

use std::time::{Duration, Instant};

use accelfed_schemas::glue::{Service, SiteSnapshot};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::render::Format;

/// The counts a document publishes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Published {
    pub services: usize,
    /// Installed GPUs in physical GPUs (a MIG slice or a replica is its share of one).
    pub gpus: GpuCount,
    /// The same GPUs in what the schedulers hand out (MIG slices, replicas, vGPUs, whole GPUs).
    pub gpu_slots: GpuCount,
}

impl Published {
    /// Counts the managers' accelerators of every service; shares are views of the same GPUs
    /// and are not added, as [`SiteSnapshot::physical_totals`] counts them.
    pub fn of(snapshot: &SiteSnapshot) -> Self {
        let mut gpus = GpuCount::ZERO;
        let mut gpu_slots = GpuCount::ZERO;
        for service in &snapshot.services {
            let accelerators = match service {
                Service::Computing(service) => &service.manager.accelerators,
                Service::Cloud(service) => &service.manager.accelerators,
            };
            for accelerator in accelerators {
                gpus = gpus + accelerator.physical().total;
                gpu_slots = gpu_slots + accelerator.capacity.total;
            }
        }
        Self {
            services: snapshot.services.len(),
            gpus,
            gpu_slots,
        }
    }
}

/// Where a document went, for the summary line.
#[derive(Debug, Clone, Copy)]
pub enum Sent<'a> {
    /// Standard output or the `-o` file (`to`): "published".
    Written { to: &'a str, format: Format },
    /// The registry at this URL, as GLUE 2.1 JSON: "pushed to the registry".
    Pushed { url: &'a str },
}

/// Logs one published document.
pub fn log(snapshot: &SiteSnapshot, sent: Sent<'_>, bytes: usize, started: Instant) {
    let (what, to, format) = match sent {
        Sent::Written { to, format } => ("published", to, format),
        Sent::Pushed { url } => ("pushed to the registry", url, Format::Glue21Json),
    };
    let published = Published::of(snapshot);
    tracing::info!(
        site = %snapshot.domain.name,
        services = published.services,
        // Numbers (a JSON number in every line: 88.0, 0.5), never text: a GPU count may be
        // fractional, so it is logged as one.
        gpus = published.gpus.get(),
        gpu_slots = published.gpu_slots.get(),
        %format,
        to,
        bytes,
        elapsed = ?to_millis(started.elapsed()),
        "{what}"
    );
}

/// Whole milliseconds: the log shows `1.234s` or `87ms`, not nanoseconds.
fn to_millis(elapsed: Duration) -> Duration {
    Duration::from_millis(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_slices_count_as_their_share_of_a_gpu_beside_their_slots() {
        let snapshot = accelfed_schemas::glue::sample::snapshot("SITE-A");
        let published = Published::of(&snapshot);
        assert_eq!(published.services, snapshot.services.len());
        let physical: f64 = snapshot
            .physical_totals()
            .values()
            .map(|count| count.get())
            .sum();
        assert!(
            (published.gpus.get() - physical).abs() < 1e-9,
            "{published:?}"
        );
        assert!(
            published.gpu_slots.get() >= published.gpus.get(),
            "{published:?}"
        );
    }

    #[test]
    fn elapsed_time_is_shown_in_whole_milliseconds() {
        let shown = format!("{:?}", to_millis(Duration::from_nanos(1_234_567_891)));
        assert_eq!(shown, "1.234s");
    }
}
