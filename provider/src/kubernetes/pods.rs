//! One pod's GPUs: how many of each resource it holds, where, and from when to when.
//!
//! The count is the scheduler's own rule for a pod's effective request: the larger of (the regular
//! containers plus the restartable init containers, i.e. sidecars, that run beside them) and the
//! peak during initialisation (each ordinary init container plus the sidecars started before it).
//! For extended resources a request defaults to the limit, so either is read.
//!
//! Times: start = `status.startTime` (an unreadable one is reported), else the earliest
//! `running.startedAt`; end = the latest `terminated.finishedAt` of a finished pod, else its
//! `deletionTimestamp` (for a pod still running too: it is being deleted). A finished pod with
//! neither has no end here; the meter leaves it as its last sighting metered it.

use chrono::{DateTime, Utc};

use super::api::{Container, ContainerStatus, GpuQuantities, Pod};
use super::quantity::whole;

/// Where a pod is in its life (`status.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl Phase {
    pub(super) fn of(text: Option<&str>) -> Self {
        match text {
            Some("Pending") => Self::Pending,
            Some("Running") => Self::Running,
            Some("Succeeded") => Self::Succeeded,
            Some("Failed") => Self::Failed,
            _ => Self::Unknown,
        }
    }

    /// Finished pods hold no devices.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed)
    }
}

/// A pod that holds (or held) GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct PodGpus {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The node it is bound to; `None` while unscheduled.
    pub node: Option<String>,
    pub phase: Phase,
    /// Resource -> devices, only resources with a non-zero count.
    pub gpus: Vec<(String, u64)>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
}

/// Reads a pod; `None` when it requests no GPU. Unreadable quantities and times are reported with
/// the pod's name; a resource whose quantity cannot be read is left out of the pod's count.
pub fn read_pod(pod: &Pod<'_>, warnings: &mut Vec<String>) -> Option<PodGpus> {
    let spec = &pod.spec;
    if spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .all(|c| c.resources.requests.is_empty() && c.resources.limits.is_empty())
    {
        return None;
    }
    let meta = &pod.metadata;
    let who = Who(&meta.namespace, &meta.name);
    // Each GPU resource the pod names, once, in the order named; a resource that counts 0 or
    // cannot be read is dropped after (its warning written once).
    let mut gpus: Vec<(String, u64)> = Vec::new();
    for container in spec.containers.iter().chain(&spec.init_containers) {
        let named = container
            .resources
            .requests
            .iter()
            .chain(container.resources.limits.iter());
        for (resource, _) in named {
            if gpus.iter().any(|(seen, _)| seen == &**resource) {
                continue;
            }
            let devices = match effective(
                spec.containers.as_slice(),
                spec.init_containers.as_slice(),
                |container| request(container, resource),
            ) {
                Ok(devices) => devices,
                Err(message) => {
                    warnings.push(format!(
                        "{who}: {resource}: {message}; resource not counted"
                    ));
                    0
                }
            };
            gpus.push((resource.to_string(), devices));
        }
    }
    gpus.retain(|(_, devices)| *devices > 0);
    if gpus.is_empty() {
        return None;
    }
    let status = &pod.status;
    let phase = Phase::of(status.phase.as_deref());
    // An unreadable startTime is reported and the containers' own start used instead.
    let start = status
        .start_time
        .as_deref()
        .and_then(|text| time(text, who, "status.startTime", warnings))
        .or_else(|| earliest_start(&status.container_statuses, who, warnings));
    let finished = latest_finish(
        status
            .container_statuses
            .iter()
            .chain(&status.init_container_statuses),
        who,
        warnings,
    );
    let deleted = meta
        .deletion_timestamp
        .as_deref()
        .and_then(|text| time(text, who, "metadata.deletionTimestamp", warnings));
    let end = if phase.is_terminal() {
        finished.or(deleted)
    } else {
        deleted
    };
    Some(PodGpus {
        namespace: meta.namespace.to_string(),
        name: meta.name.to_string(),
        uid: meta.uid.to_string(),
        node: spec
            .node_name
            .as_deref()
            .filter(|node| !node.is_empty())
            .map(str::to_owned),
        phase,
        gpus,
        start,
        end,
    })
}

/// The pod's effective request of one resource, given each container's request of it (the
/// scheduler's rule in the module's doc; CPU follows it too).
pub(super) fn effective(
    containers: &[Container<'_>],
    init: &[Container<'_>],
    request: impl Fn(&Container<'_>) -> Result<u64, String>,
) -> Result<u64, String> {
    let mut app = 0_u64;
    for container in containers {
        app = app.saturating_add(request(container)?);
    }
    let mut sidecars = 0_u64;
    let mut init_peak = 0_u64;
    for container in init {
        let devices = request(container)?;
        if container.restart_policy.as_deref() == Some("Always") {
            sidecars = sidecars.saturating_add(devices);
            init_peak = init_peak.max(sidecars);
        } else {
            init_peak = init_peak.max(sidecars.saturating_add(devices));
        }
    }
    Ok(app.saturating_add(sidecars).max(init_peak))
}

/// One container's request, defaulting to its limit as Kubernetes does for extended resources.
fn request(container: &Container<'_>, resource: &str) -> Result<u64, String> {
    fn find<'a>(list: &'a GpuQuantities<'_>, resource: &str) -> Option<&'a str> {
        list.iter()
            .find(|(name, _)| &**name == resource)
            .map(|(_, value)| &**value)
    }
    match find(&container.resources.requests, resource)
        .or_else(|| find(&container.resources.limits, resource))
    {
        Some(text) => whole(text).map_err(|err| err.to_string()),
        None => Ok(0),
    }
}

/// Names a pod in warnings; formatted only when one is written.
#[derive(Clone, Copy)]
struct Who<'a>(&'a str, &'a str);

impl std::fmt::Display for Who<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pod {}/{}", self.0, self.1)
    }
}

fn time(
    text: &str,
    who: Who<'_>,
    field: &str,
    warnings: &mut Vec<String>,
) -> Option<DateTime<Utc>> {
    match api_time(text).ok_or(()).or_else(|()| {
        DateTime::parse_from_rfc3339(text)
            .map(|at| at.with_timezone(&Utc))
            .map_err(|_| ())
    }) {
        Ok(at) => Some(at),
        Err(()) => {
            warnings.push(format!(
                "{who}: {field} {text:?} is not an RFC 3339 time; ignored"
            ));
            None
        }
    }
}

/// The API server writes every time as `2024-05-01T10:00:00Z` (UTC, whole seconds); that shape
/// is read here directly, as chrono's general RFC 3339 parser costs a good part of a pod's
/// reading. Anything else (`None`) goes to chrono.
fn api_time(text: &str) -> Option<DateTime<Utc>> {
    let b = text.as_bytes();
    let shaped = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    if !shaped {
        return None;
    }
    let number = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0_u32, |value, digit| {
            digit
                .is_ascii_digit()
                .then(|| value * 10 + u32::from(digit - b'0'))
        })
    };
    let year = i32::try_from(number(0, 4)?).ok()?;
    chrono::NaiveDate::from_ymd_opt(year, number(5, 7)?, number(8, 10)?)?
        .and_hms_opt(number(11, 13)?, number(14, 16)?, number(17, 19)?)
        .map(|at| at.and_utc())
}

fn earliest_start(
    statuses: &[ContainerStatus<'_>],
    who: Who<'_>,
    warnings: &mut Vec<String>,
) -> Option<DateTime<Utc>> {
    statuses
        .iter()
        .filter_map(|s| s.state.running.as_ref()?.started_at.as_deref())
        .filter_map(|text| time(text, who, "running.startedAt", warnings))
        .min()
}

fn latest_finish<'a, 'b: 'a>(
    statuses: impl Iterator<Item = &'a ContainerStatus<'b>>,
    who: Who<'_>,
    warnings: &mut Vec<String>,
) -> Option<DateTime<Utc>> {
    statuses
        .filter_map(|s| s.state.terminated.as_ref()?.finished_at.as_deref())
        .filter_map(|text| time(text, who, "terminated.finishedAt", warnings))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: &str) -> Pod<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn init_containers_and_sidecars_follow_the_scheduler_rule() {
        // app 2 + sidecar 1 = 3; init peak: 4 (ordinary init) -> effective 4.
        let p = pod(r#"{"metadata":{"name":"p","namespace":"ns","uid":"u"},
            "spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}],
                    "initContainers":[
                      {"restartPolicy":"Always","resources":{"requests":{"nvidia.com/gpu":"1"}}},
                      {"resources":{"requests":{"nvidia.com/gpu":"3"}}}]},
            "status":{"phase":"Running","startTime":"2024-05-01T10:00:00Z"}}"#);
        let read = read_pod(&p, &mut Vec::new()).unwrap();
        assert_eq!(read.gpus, vec![("nvidia.com/gpu".to_owned(), 4)]);
        assert_eq!(read.end, None);
    }

    #[test]
    fn a_fractional_request_is_reported_and_not_counted() {
        let p = pod(r#"{"metadata":{"name":"bad","namespace":"ns"},
            "spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"0.5"}}}]}}"#);
        let mut warnings = Vec::new();
        assert_eq!(read_pod(&p, &mut warnings), None);
        assert_eq!(
            warnings,
            vec![
                "pod ns/bad: nvidia.com/gpu: quantity \"0.5\" is not a whole number of devices; resource not counted"
            ]
        );
    }

    #[test]
    fn api_times_read_as_chrono_reads_them() {
        for text in [
            "2024-05-01T10:00:00Z",
            "1999-12-31T23:59:59Z",
            "2024-02-29T00:00:01Z",
        ] {
            let chrono = DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc);
            assert_eq!(api_time(text), Some(chrono), "{text}");
        }
        // Other shapes are chrono's: offsets, fractions, leap seconds, garbage.
        for text in [
            "2024-05-01T12:00:00+02:00",
            "2024-05-01T10:00:00.5Z",
            "2016-12-31T23:59:60Z",
            "2024-13-01T10:00:00Z",
            "2024-05-01T1a:00:00Z",
            "yesterday",
        ] {
            assert_eq!(api_time(text), None, "{text}");
        }
        let mut warnings = Vec::new();
        let who = Who("ns", "p");
        assert_eq!(
            time("2024-05-01T12:00:00+02:00", who, "f", &mut warnings),
            Some(
                DateTime::parse_from_rfc3339("2024-05-01T10:00:00Z")
                    .unwrap()
                    .with_timezone(&Utc)
            )
        );
        assert_eq!(time("2024-13-01T10:00:00Z", who, "f", &mut warnings), None);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }

    #[test]
    fn a_finished_pod_ends_at_its_last_container() {
        let p = pod(r#"{"metadata":{"name":"done","namespace":"ns"},
            "spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"1"}}}]},
            "status":{"phase":"Succeeded","containerStatuses":[
              {"state":{"terminated":{"finishedAt":"2024-05-01T12:00:00Z"}}},
              {"state":{"terminated":{"finishedAt":"2024-05-01T12:30:00Z"}}}]}}"#);
        let read = read_pod(&p, &mut Vec::new()).unwrap();
        assert_eq!(read.end.unwrap().to_rfc3339(), "2024-05-01T12:30:00+00:00");
        assert_eq!(read.start, None);
    }
}
