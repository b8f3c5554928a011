//! GPU utilisation per pod from NVIDIA's DCGM exporter, as a Prometheus server answers an instant
//! query (`resultType: vector`). Pure: [`super::client::prometheus`] asks, this reads.
//!
//! Series carry the labels `pod` and `namespace` (or `exported_pod`/`exported_namespace` when the
//! scrape renamed them), the node as `Hostname` or `hostname`, and the device `UUID`.
//! `DCGM_FI_DEV_GPU_UTIL` is a percentage (0-100) per GPU; under MIG it is not reported per slice,
//! and `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (a ratio, 0-1) is used instead. A pod on several devices
//! gets the mean of its devices. Values outside the metric's range are reported and left out.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The metrics read, and how to turn a sample into a fraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `DCGM_FI_DEV_GPU_UTIL`, percent.
    GpuUtil,
    /// `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, ratio (MIG slices).
    GrEngineActive,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Self::GpuUtil => "DCGM_FI_DEV_GPU_UTIL",
            Self::GrEngineActive => "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        }
    }

    fn scale(self) -> f64 {
        match self {
            Self::GpuUtil => 100.0,
            Self::GrEngineActive => 1.0,
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

/// (namespace, pod) -> mean utilisation in 0..=1.
pub type Utilisation = BTreeMap<(String, String), f64>;

/// Reads one query's answer; `Err` when the server said the query failed or the body is not a
/// Prometheus answer.
pub fn read(body: &str, metric: Metric, warnings: &mut Vec<String>) -> Result<Utilisation, String> {
    let response: Response = serde_json::from_str(body).map_err(|err| err.to_string())?;
    if response.status != "success" {
        return Err(response
            .error
            .unwrap_or_else(|| format!("status {:?}", response.status)));
    }
    let mut sums: BTreeMap<(String, String), (f64, u32)> = BTreeMap::new();
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
            .map(|v| v / metric.scale());
        match value.filter(|v| (0.0..=1.0).contains(v)) {
            Some(fraction) => {
                let entry = sums.entry((namespace, pod)).or_default();
                entry.0 += fraction;
                entry.1 += 1;
            }
            None => warnings.push(format!(
                "{} of pod {namespace}/{pod} on {} ({}): {:?} is out of range; ignored",
                metric.name(),
                label(&["Hostname", "hostname"]).unwrap_or_default(),
                label(&["UUID"]).unwrap_or_default(),
                sample.value.1
            )),
        }
    }
    Ok(sums
        .into_iter()
        .map(|(key, (sum, n))| (key, sum / f64::from(n)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_of_a_pod_are_averaged_and_bad_values_reported() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","pod":"train","namespace":"atlas","Hostname":"gpu-1","UUID":"GPU-a"},"value":[1714557600,"80"]},
          {"metric":{"pod":"train","namespace":"atlas","Hostname":"gpu-1","UUID":"GPU-b"},"value":[1714557600,"40"]},
          {"metric":{"pod":"idle","namespace":"cms","hostname":"gpu-2","UUID":"GPU-c"},"value":[1714557600,"NaN"]},
          {"metric":{"Hostname":"gpu-3","UUID":"GPU-d"},"value":[1714557600,"10"]}]}}"#;
        let mut warnings = Vec::new();
        let read = read(body, Metric::GpuUtil, &mut warnings).unwrap();
        assert_eq!(read.len(), 1);
        assert!((read[&("atlas".to_owned(), "train".to_owned())] - 0.6).abs() < 1e-9);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("cms/idle on gpu-2 (GPU-c)"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_failed_query_is_an_error() {
        let body = r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        assert_eq!(
            read(body, Metric::GpuUtil, &mut Vec::new()),
            Err("parse error".to_owned())
        );
    }
}
