//! GPU utilisation and energy per pod from NVIDIA's DCGM exporter, as a Prometheus server answers
//! an instant query (`resultType: vector`). Pure: [`super::client::prometheus`] asks, this reads;
//! [`super::dcgm_energy`] shares a GPU's energy out among the pods that held it.
//!
//! **Two naming schemes.** dcgm-exporter 4.9 renamed the fields DCGM 4.7 deprecates and changed
//! some units; a fleet upgrading node by node serves both at once, so every metric is asked for
//! under both names and each answer read in its own unit:
//!
//! | what | up to 4.8 | 4.9 on |
//! |---|---|---|
//! | GPU utilisation | `DCGM_FI_DEV_GPU_UTIL`, percent | `DCGM_FI_DEV_GPU_UTIL_RATIO`, 0-1 |
//! | graphics engine activity | `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, 0-1 | `DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO`, 0-1 |
//! | energy since driver load | `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, mJ | `DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL`, J |
//!
//! Series carry the labels `pod` and `namespace` (or `exported_pod`/`exported_namespace` when the
//! scrape renamed them), the node as `Hostname` or `hostname`, the device `UUID`, and under MIG
//! the instance `GPU_I_ID`. **MIG:** the plain utilisation of a MIG instance reads 0 whatever the
//! instance does, so a device (GPU and instance) with a graphics-engine reading is read from that,
//! and from the plain utilisation only where it has none. A pod on several devices gets the mean
//! of its devices. Values outside the metric's range are reported and left out.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

/// The exporter's naming scheme (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// dcgm-exporter up to 4.8.
    Legacy,
    /// dcgm-exporter 4.9 on (DCGM 4.7's field names).
    Renamed,
}

/// The metrics read, and how to turn a sample into a fraction or watt-hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Whole-GPU utilisation.
    GpuUtil,
    /// Graphics engine activity, the one that moves under MIG.
    GrEngineActive,
    /// The energy counter since driver load.
    Energy,
}

impl Metric {
    /// Every metric under every scheme: what the meter asks Prometheus for.
    pub const ALL: [(Metric, Scheme); 6] = [
        (Metric::GpuUtil, Scheme::Legacy),
        (Metric::GpuUtil, Scheme::Renamed),
        (Metric::GrEngineActive, Scheme::Legacy),
        (Metric::GrEngineActive, Scheme::Renamed),
        (Metric::Energy, Scheme::Legacy),
        (Metric::Energy, Scheme::Renamed),
    ];

    pub fn name(self, scheme: Scheme) -> &'static str {
        match (self, scheme) {
            (Self::GpuUtil, Scheme::Legacy) => "DCGM_FI_DEV_GPU_UTIL",
            (Self::GpuUtil, Scheme::Renamed) => "DCGM_FI_DEV_GPU_UTIL_RATIO",
            (Self::GrEngineActive, Scheme::Legacy) => "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            (Self::GrEngineActive, Scheme::Renamed) => "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO",
            (Self::Energy, Scheme::Legacy) => "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            (Self::Energy, Scheme::Renamed) => "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL",
        }
    }

    /// What a sample is divided by: to a fraction (utilisation) or to watt-hours (energy).
    fn divisor(self, scheme: Scheme) -> f64 {
        match (self, scheme) {
            (Self::GpuUtil, Scheme::Legacy) => 100.0,
            (Self::GpuUtil | Self::GrEngineActive, _) => 1.0,
            // mJ -> Wh, J -> Wh.
            (Self::Energy, Scheme::Legacy) => 3_600_000.0,
            (Self::Energy, Scheme::Renamed) => 3_600.0,
        }
    }

    /// The largest value that makes sense once divided (energy has none).
    fn ceiling(self) -> f64 {
        match self {
            Self::Energy => f64::MAX,
            Self::GpuUtil | Self::GrEngineActive => 1.0,
        }
    }
}

#[derive(Debug, Deserialize)]
struct Response {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Data {
    #[serde(default)]
    result: Vec<Sample>,
}

#[derive(Debug, Deserialize)]
struct Sample {
    metric: BTreeMap<String, String>,
    /// `[unix time, "value"]`.
    value: (f64, String),
}

/// One series of one answer: a pod on one device (GPU, or MIG instance of it), with its value in
/// the metric's common unit (a fraction, or watt-hours).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub namespace: String,
    pub pod: String,
    /// The GPU's UUID.
    pub device: String,
    /// The MIG instance (`GPU_I_ID`), where the series is one.
    pub instance: Option<String>,
    pub value: f64,
}

/// (namespace, pod) -> mean utilisation in 0..=1.
pub type Utilisation = BTreeMap<(String, String), f64>;

/// (namespace, pod) -> watt-hours over the pod's hold.
pub type Energy = BTreeMap<(String, String), f64>;

/// What the meter learnt from DCGM for one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DcgmReadings {
    pub utilisation: Utilisation,
    pub energy: Energy,
}

/// Reads one query's answer; `Err` when the server said the query failed or the body is not a
/// Prometheus answer.
pub fn read(
    body: &str,
    metric: Metric,
    scheme: Scheme,
    warnings: &mut Vec<String>,
) -> Result<Vec<Series>, String> {
    let response: Response = serde_json::from_str(body).map_err(|err| err.to_string())?;
    if response.status != "success" {
        return Err(response
            .error
            .unwrap_or_else(|| format!("status {:?}", response.status)));
    }
    let mut out = Vec::new();
    for sample in response.data.map(|d| d.result).unwrap_or_default() {
        let label = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| sample.metric.get(*n))
                .filter(|v| !v.is_empty())
                .cloned()
        };
        let (Some(namespace), Some(pod)) = (
            label(&["namespace", "exported_namespace"]),
            label(&["pod", "exported_pod"]),
        ) else {
            continue;
        };
        let value = sample
            .value
            .1
            .parse::<f64>()
            .ok()
            .map(|v| v / metric.divisor(scheme));
        match value.filter(|v| (0.0..=metric.ceiling()).contains(v)) {
            Some(value) => out.push(Series {
                namespace,
                pod,
                device: label(&["UUID"]).unwrap_or_default(),
                instance: label(&["GPU_I_ID"]),
                value,
            }),
            None => warnings.push(format!(
                "{} of pod {namespace}/{pod} on {} ({}): {:?} is out of range; ignored",
                metric.name(scheme),
                label(&["Hostname", "hostname"]).unwrap_or_default(),
                label(&["UUID"]).unwrap_or_default(),
                sample.value.1
            )),
        }
    }
    Ok(out)
}

/// Utilisation per pod (see the module documentation on MIG): a MIG instance is read from its
/// graphics-engine activity only, since its plain utilisation reads 0 (a plain reading of a GPU
/// that has MIG instances of the pod is left out too); a whole GPU from its plain utilisation,
/// else from its graphics-engine activity. Per pod, the mean of its devices.
pub fn utilisation(gpu_util: &[Series], gr_engine: &[Series]) -> Utilisation {
    let mig_gpus: BTreeSet<(&str, &str, &str)> = gr_engine
        .iter()
        .filter(|s| s.instance.is_some())
        .map(|s| (s.namespace.as_str(), s.pod.as_str(), s.device.as_str()))
        .collect();
    let mut devices: BTreeMap<(&str, &str, &str, Option<&str>), f64> = BTreeMap::new();
    for series in gr_engine {
        devices.insert(device_key(series), series.value);
    }
    // Then the plain utilisation, which wins on whole GPUs.
    for series in gpu_util {
        let gpu = (
            series.namespace.as_str(),
            series.pod.as_str(),
            series.device.as_str(),
        );
        if series.instance.is_none() && !mig_gpus.contains(&gpu) {
            devices.insert(device_key(series), series.value);
        }
    }
    let mut sums: BTreeMap<(String, String), (f64, u32)> = BTreeMap::new();
    for ((namespace, pod, _, _), value) in devices {
        let entry = sums
            .entry((namespace.to_owned(), pod.to_owned()))
            .or_default();
        entry.0 += value;
        entry.1 += 1;
    }
    sums.into_iter()
        .map(|(key, (sum, n))| (key, sum / f64::from(n)))
        .collect()
}

fn device_key(series: &Series) -> (&str, &str, &str, Option<&str>) {
    (
        &series.namespace,
        &series.pod,
        &series.device,
        series.instance.as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(body: &str, metric: Metric, scheme: Scheme) -> Vec<Series> {
        read(body, metric, scheme, &mut Vec::new()).unwrap()
    }

    #[test]
    fn devices_of_a_pod_are_averaged_and_bad_values_reported() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","pod":"train","namespace":"atlas","Hostname":"gpu-1","UUID":"GPU-a"},"value":[1714557600,"80"]},
          {"metric":{"pod":"train","namespace":"atlas","Hostname":"gpu-1","UUID":"GPU-b"},"value":[1714557600,"40"]},
          {"metric":{"pod":"idle","namespace":"cms","hostname":"gpu-2","UUID":"GPU-c"},"value":[1714557600,"NaN"]},
          {"metric":{"Hostname":"gpu-3","UUID":"GPU-d"},"value":[1714557600,"10"]}]}}"#;
        let mut warnings = Vec::new();
        let read = read(body, Metric::GpuUtil, Scheme::Legacy, &mut warnings).unwrap();
        let utilisation = utilisation(&read, &[]);
        assert_eq!(utilisation.len(), 1);
        assert!((utilisation[&("atlas".to_owned(), "train".to_owned())] - 0.6).abs() < 1e-9);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("DCGM_FI_DEV_GPU_UTIL of pod cms/idle on gpu-2 (GPU-c)"),
            "{warnings:?}"
        );
    }

    #[test]
    fn each_scheme_is_read_in_its_own_unit() {
        let answer = |name: &str, value: &str| {
            format!(
                r#"{{"status":"success","data":{{"result":[{{"metric":{{"__name__":"{name}","pod":"p","namespace":"n","UUID":"GPU-a"}},"value":[0,"{value}"]}}]}}}}"#
            )
        };
        let one = |metric: Metric, scheme: Scheme, value: &str| {
            series(&answer(metric.name(scheme), value), metric, scheme)[0].value
        };
        assert_eq!(one(Metric::GpuUtil, Scheme::Legacy, "25"), 0.25);
        assert_eq!(one(Metric::GpuUtil, Scheme::Renamed, "0.25"), 0.25);
        assert_eq!(one(Metric::GrEngineActive, Scheme::Renamed, "0.25"), 0.25);
        // 1 Wh: 3,600,000 mJ before 4.9, 3,600 J from 4.9 on.
        assert_eq!(one(Metric::Energy, Scheme::Legacy, "3600000"), 1.0);
        assert_eq!(one(Metric::Energy, Scheme::Renamed, "3600"), 1.0);
        // A ratio of 25 is no ratio.
        let mut warnings = Vec::new();
        let body = answer("DCGM_FI_DEV_GPU_UTIL_RATIO", "25");
        assert!(
            read(&body, Metric::GpuUtil, Scheme::Renamed, &mut warnings)
                .unwrap()
                .is_empty()
        );
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn a_mig_instance_is_read_from_its_graphics_engine_not_its_zero_plain_utilisation() {
        let device = |pod: &str, uuid: &str, instance: Option<&str>, value| Series {
            namespace: "cms".into(),
            pod: pod.into(),
            device: uuid.into(),
            instance: instance.map(str::to_owned),
            value,
        };
        let plain = [
            // MIG: the instance's and the GPU's plain utilisation read 0.
            device("mig", "GPU-m", Some("7"), 0.0),
            device("mig", "GPU-m", None, 0.0),
            // A whole GPU: the plain utilisation counts, the graphics engine does not override it.
            device("whole", "GPU-w", None, 0.8),
            // A MIG instance without a graphics-engine reading: its 0 says nothing.
            device("blind", "GPU-b", Some("1"), 0.0),
        ];
        let engine = [
            device("mig", "GPU-m", Some("7"), 0.3),
            device("whole", "GPU-w", None, 0.1),
            device("engine-only", "GPU-e", None, 0.4),
        ];
        let read = utilisation(&plain, &engine);
        let of = |pod: &str| read.get(&("cms".to_owned(), pod.to_owned())).copied();
        assert_eq!(of("mig"), Some(0.3));
        assert_eq!(of("whole"), Some(0.8));
        assert_eq!(of("engine-only"), Some(0.4));
        assert_eq!(of("blind"), None);
    }

    #[test]
    fn a_failed_query_is_an_error() {
        let body = r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        assert_eq!(
            read(body, Metric::GpuUtil, Scheme::Legacy, &mut Vec::new()),
            Err("parse error".to_owned())
        );
    }
}
