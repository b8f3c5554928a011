//! Servers -> GPU usage intervals, the OpenStack meter's observations. One interval per server:
//! from `created` (cASO's start, not `launched_at`) to `OS-SRV-USG:terminated_at`, else the
//! deletion time (`updated` of a DELETED server), else open. A SHELVED_OFFLOADED server holds no
//! GPU, so its interval ends at its last change (the offload); a server that never launched (failed
//! at build) held none, whether or not it was deleted since. Splitting into calendar-month records
//! is the accounting side's job; [`VmUsage::seconds_within`] is the overlap it needs.

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};

use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::VoName;

use super::api::Server;
use super::conventions::FlavorGpu;

/// One VM's hold on GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct VmUsage {
    /// The server as Nova listed it: its texts are shared with the listing, not copied per VM.
    server: Server,
    /// The project's VO (FQAN `/<vo>`); `None` for projects that serve no VO. Shared by the
    /// project's VMs.
    pub vo: Option<Arc<VoName>>,
    /// Shared by every VM of the flavor.
    pub gpu: Arc<FlavorGpu>,
    pub start: DateTime<Utc>,
    /// `None` while the server still holds its GPUs.
    pub end: Option<DateTime<Utc>>,
}

impl VmUsage {
    /// The server's UUID: APEL's `AssociatedRecord` (with `AssociatedRecordType = cloud`).
    pub fn server_id(&self) -> &str {
        self.server.id()
    }

    pub fn server_name(&self) -> &str {
        self.server.name()
    }

    pub fn project_id(&self) -> &str {
        self.server.tenant_id()
    }

    /// APEL's `GlobalUserName` source: the Keystone user id.
    pub fn user_id(&self) -> &str {
        self.server.user_id()
    }

    /// The flavor's name as embedded in the server (2.47 on), else its id.
    pub fn flavor(&self) -> &str {
        self.server
            .flavor_name()
            .or_else(|| self.server.flavor_id())
            .unwrap_or_default()
    }

    /// Nova's status (`ACTIVE`, `DELETED`...), as Nova spells it.
    pub fn status(&self) -> &str {
        self.server.status()
    }

    /// Nova's `updated`: the server's last change (RFC 3339, whole seconds).
    pub fn updated(&self) -> Option<&str> {
        self.server.updated()
    }

    /// Seconds this VM held its GPUs within `[from, to)`, with an open interval closed at `to`.
    pub fn seconds_within(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
        let start = self.start.max(from);
        let end = self.end.unwrap_or(to).min(to);
        (end - start).num_seconds().max(0)
    }

    /// Unit-seconds within `[from, to)`: the flavor's units (vGPUs, GPUs) x seconds; the meter's
    /// physical GPU-seconds use [`FlavorGpu::physical_count`] instead.
    pub fn gpu_seconds_within(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
        self.gpu.count.get() * self.seconds_within(from, to) as f64
    }

    /// APEL's `Model` as cASO writes it: "<Vendor> <Model>".
    pub fn apel_model(&self) -> String {
        format!("{} {}", self.gpu.spec.vendor, self.gpu.spec.model)
    }

    /// The units the flavor gives (vGPUs, GPUs, a fraction), as published per flavor; a record's
    /// Count is the physical share, [`FlavorGpu::physical_count`].
    pub fn count(&self) -> GpuCount {
        self.gpu.count
    }
}

/// Nova times: RFC 3339 (`created`, `updated`) or naive UTC with microseconds (`OS-SRV-USG:*`).
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.with_timezone(&Utc));
    }
    // `str::parse` reads Nova's `2026-11-22T04:30:00.000000` without interpreting a format string
    // per call; the format is the fallback for anything it does not take.
    text.parse::<NaiveDateTime>()
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
        .map(|naive| naive.and_utc())
}

/// Statuses of servers that hold no GPU now.
pub fn holds_no_gpu(status: &str) -> bool {
    ["DELETED", "SOFT_DELETED", "SHELVED_OFFLOADED"]
        .iter()
        .any(|s| status.eq_ignore_ascii_case(s))
}

/// The GPU interval of `server`, whose flavor gives `gpu`. `Err` names the server when its times
/// cannot be read (it is then left out of the records, loudly).
pub fn observe(
    server: &Server,
    gpu: Arc<FlavorGpu>,
    vo: Option<Arc<VoName>>,
) -> Result<VmUsage, String> {
    let time = |field: &str, text: &str| {
        parse_time(text).ok_or_else(|| {
            format!(
                "server {} ({}): {field} {text:?} is not a time",
                server.name(),
                server.id()
            )
        })
    };
    let start = time("created", server.created())?;
    let end = match server.terminated_at() {
        // Never launched (failed at build): no GPU time, also when it was deleted afterwards (its
        // `terminated_at` is then the deletion; cASO charges created..deleted for it).
        _ if server.launched() == Some(false) => Some(start),
        Some(terminated) if !terminated.is_empty() => Some(time("terminated_at", terminated)?),
        _ if holds_no_gpu(server.status()) => match server.updated() {
            Some(updated) => Some(time("updated", updated)?),
            None => Some(start),
        },
        _ => None,
    };
    Ok(VmUsage {
        server: server.clone(),
        vo,
        gpu,
        start,
        end: end.map(|end| end.max(start)),
    })
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::gpu::{GpuModel, GpuSpec};
    use accelfed_schemas::names::Text;
    use serde_json::{Value, json};

    use super::*;
    use crate::openstack::config::Convention;

    fn gpu(count: u32) -> Arc<FlavorGpu> {
        Arc::new(FlavorGpu {
            spec: GpuSpec::new(
                Text::new("NVIDIA").unwrap(),
                GpuModel::new("Tesla V100").unwrap(),
            ),
            count: GpuCount::whole(count),
            convention: Convention::Egi,
            resource_class: None,
            version: None,
        })
    }

    fn at(text: &str) -> DateTime<Utc> {
        parse_time(text).unwrap()
    }

    /// A recorded server (2.93) as JSON, to change before reading it.
    fn recorded(name: &str) -> Value {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/openstack/nova-servers-detail-alltenants-2.93.json"
        ))
        .unwrap();
        let list: Value = serde_json::from_str(&text).unwrap();
        list["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    }

    fn read(value: &Value) -> Server {
        serde_json::from_str(&value.to_string()).unwrap()
    }

    #[test]
    fn a_real_running_server_starts_at_created_and_stays_open() {
        let server = read(&recorded("atlas-gpu-1"));
        let usage = observe(&server, gpu(2), None).unwrap();
        assert_eq!(usage.start, at(server.created()));
        assert_eq!(usage.end, None);
        assert_eq!(usage.server_name(), "atlas-gpu-1");
        assert_eq!(usage.server_id(), server.id());
        let hour_later = usage.start + chrono::Duration::hours(1);
        assert_eq!(usage.gpu_seconds_within(usage.start, hour_later), 7200.0);
        assert_eq!(usage.apel_model(), "NVIDIA Tesla V100");
    }

    #[test]
    fn deleted_terminated_and_offloaded_servers_are_closed() {
        let mut server = recorded("cms-gpu-1");
        server["status"] = json!("DELETED");
        server["updated"] = json!("2026-11-22T05:00:00Z");
        let usage = observe(&read(&server), gpu(1), None).unwrap();
        assert_eq!(usage.end, Some(at("2026-11-22T05:00:00Z")));

        server["OS-SRV-USG:terminated_at"] = json!("2026-11-22T04:30:00.000000");
        assert_eq!(
            observe(&read(&server), gpu(1), None).unwrap().end,
            Some(at("2026-11-22T04:30:00Z"))
        );

        server["OS-SRV-USG:terminated_at"] = Value::Null;
        server["status"] = json!("SHELVED_OFFLOADED");
        let usage = observe(&read(&server), gpu(1), None).unwrap();
        assert_eq!(usage.end, Some(at("2026-11-22T05:00:00Z")));
        let after = at("2026-11-22T06:00:00Z");
        assert_eq!(
            usage.seconds_within(after, after + chrono::Duration::hours(1)),
            0
        );
    }

    #[test]
    fn a_server_that_never_launched_held_no_gpu_time() {
        let mut server = recorded("cms-gpu-1");
        assert_eq!(read(&server).launched(), Some(true));
        server["OS-SRV-USG:launched_at"] = Value::Null;
        server["status"] = json!("ERROR");
        let usage = observe(&read(&server), gpu(1), None).unwrap();
        assert_eq!(usage.end, Some(usage.start));
        assert_eq!(
            usage.seconds_within(usage.start, at("2026-12-01T00:00:00Z")),
            0
        );
        // Deleted afterwards: still none.
        server["status"] = json!("DELETED");
        server["OS-SRV-USG:terminated_at"] = json!("2026-11-20T10:00:00.000000");
        let usage = observe(&read(&server), gpu(1), None).unwrap();
        assert_eq!(usage.end, Some(usage.start));
    }

    #[test]
    fn unreadable_times_name_the_server() {
        let mut server = recorded("cms-gpu-1");
        server["created"] = json!("yesterday");
        let err = observe(&read(&server), gpu(1), None).unwrap_err();
        assert!(
            err.contains("cms-gpu-1") && err.contains("created \"yesterday\""),
            "{err}"
        );
    }

    #[test]
    fn a_month_boundary_splits_the_seconds() {
        let mut server = recorded("cms-gpu-1");
        server["created"] = json!("2026-10-31T23:00:00Z");
        server["OS-SRV-USG:terminated_at"] = json!("2026-11-01T01:00:00");
        let usage = observe(&read(&server), gpu(1), None).unwrap();
        let nov = at("2026-11-01T00:00:00Z");
        assert_eq!(usage.seconds_within(at("2026-10-01T00:00:00Z"), nov), 3600);
        assert_eq!(usage.seconds_within(nov, at("2026-12-01T00:00:00Z")), 3600);
    }

    #[test]
    fn nova_times_of_both_shapes_read() {
        assert_eq!(
            parse_time("2026-11-22T04:30:00.000000"),
            parse_time("2026-11-22T04:30:00Z")
        );
        assert_eq!(
            parse_time("2026-11-22T04:30:00+01:00"),
            parse_time("2026-11-22T03:30:00Z")
        );
        assert_eq!(parse_time("2026-11-22"), None);
    }
}
