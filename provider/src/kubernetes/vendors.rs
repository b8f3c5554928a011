//! AMD and Intel GPUs on a node, and GPU resources accelfed does not know.
//!
//! - `amd.com/gpu`: the model from AMD's own name table by the device id (`amd.com/gpu.device-id`,
//!   or the older labeller's `beta.amd.com/gpu.device-id.<id>` keys), else the labeller's product
//!   name without its board words, else, for an id AMD gives to several products (`740c`), AMD's
//!   name for them, reported. Every device is a whole GPU.
//! - `gpu.intel.com/i915` and `gpu.intel.com/xe` (the Intel GPU plugin, one resource per kernel
//!   driver): the model from Intel's NFD rules' `gpu.intel.com/product` or the device id of
//!   `gpu.intel.com/device-id.<class>-<device>.present`; the physical GPUs from
//!   `gpu.intel.com/device.count` or that device's `.count`. More devices than GPUs is the plugin's
//!   `-shared-dev-num`: the devices are time-sliced shares of the GPUs.
//! - Another resource of a GPU vendor that names a GPU (`nvidia.com/pgpu`): published and metered
//!   as whole GPUs of the model the node's labels name, reported once per resource name, rather
//!   than dropped.
//!
//! A model, id or label accelfed cannot place is published as what is known and reported once per
//! name (`Labels::note_name`), never left out.

use accelfed_schemas::gpu::vendors::amd::{self as amd_names, DeviceName};
use accelfed_schemas::gpu::vendors::intel as intel_names;
use accelfed_schemas::gpu::{GpuCount, GpuModel, GpuSpec, MemoryMb, Sharing, Virtualization};
use accelfed_schemas::names::Text;

use super::labels::Labels;
use super::nodes::{count, nvidia_spec, spec, text};

/// A resource's device spec, what one device is of a GPU, and the GPUs behind the capacity.
pub(super) type Read = (GpuSpec, Sharing, GpuCount);

/// `amd.com/gpu`: whole GPUs.
pub(super) fn amd(capacity: u64, labels: &mut Labels<'_>) -> Read {
    let mut gpu = amd_spec(labels);
    let vram = labels.amd("vram").or_else(|| {
        labels
            .under("beta.amd.com/gpu.vram.")
            .next()
            .map(|(vram, _)| vram)
    });
    gpu.memory = vram.and_then(|vram| MemoryMb::parse(&vram.replace('G', " GiB")).ok());
    gpu.driver_version = labels.amd("driver-version").and_then(text);
    (gpu, Sharing::Whole, count(capacity))
}

fn amd_spec(labels: &mut Labels<'_>) -> GpuSpec {
    let device = amd_device(labels);
    let shared = match device.and_then(amd_names::device_name) {
        Some(DeviceName::One(name)) => return spec("AMD", name, labels),
        Some(DeviceName::Shared(name)) => Some(name),
        None => None,
    };
    let product = labels.amd("product-name").or_else(|| {
        labels
            .under("beta.amd.com/gpu.product-name.")
            .next()
            .map(|(name, _)| name)
    });
    if let Some(product) = product {
        return spec("AMD", &amd_names::product_name(product), labels);
    }
    let (name, note) = match (device, shared) {
        (Some(id), Some(name)) => (
            name.to_owned(),
            format!(
                "AMD device id {id:04x} is {name:?} in AMD's name table, one id of several products, and no product-name label says which; published under that name"
            ),
        ),
        (Some(id), None) => (
            format!("AMD GPU 1002:{id:04x}"),
            format!(
                "AMD device id {id:04x} is no Instinct GPU accelfed knows; published as \"AMD GPU 1002:{id:04x}\""
            ),
        ),
        (None, _) => (
            "AMD GPU".to_owned(),
            "amd.com/gpu without a device-id or product-name label (is AMD's node labeller running?); published as \"AMD GPU\"".to_owned(),
        ),
    };
    labels.note_name(note);
    GpuSpec::new(Text::literal("AMD"), model(&name))
}

/// The device id the current (`amd.com/gpu.device-id=74a1`) or older
/// (`beta.amd.com/gpu.device-id.74a1=8`) labeller wrote.
fn amd_device(labels: &mut Labels<'_>) -> Option<u16> {
    if let Some(value) = labels.amd("device-id") {
        match hex_id(value) {
            Some(id) => return Some(id),
            None => labels.warn(
                "amd.com/gpu.device-id",
                value,
                "is not a PCI device id; ignored",
            ),
        }
    }
    labels
        .under("beta.amd.com/gpu.device-id.")
        .find_map(|(id, _)| hex_id(id))
}

/// `gpu.intel.com/i915` or `gpu.intel.com/xe`.
pub(super) fn intel(capacity: u64, labels: &mut Labels<'_>) -> Read {
    let (mut gpu, device_count) = intel_spec(labels);
    let gpus = labels
        .number("gpu.intel.com/device.count")
        .or(device_count)
        .filter(|gpus| *gpus > 0);
    if let Some(gpus) = gpus
        && let Some(total) = labels.number("gpu.intel.com/memory.max")
    {
        // The sum over the node's GPUs, in bytes.
        let mib = total / gpus / (1024 * 1024);
        gpu.memory = (mib > 0).then(|| MemoryMb::from_mib(mib));
    }
    match gpus {
        Some(gpus) if capacity > gpus => {
            // The plugin's `-shared-dev-num`: each GPU offered to that many containers.
            let replicas = u32::try_from(capacity.div_ceil(gpus)).unwrap_or(u32::MAX);
            gpu.virtualization = Virtualization::TimeSlicing;
            (gpu, Sharing::TimeSlicing { replicas }, count(gpus))
        }
        _ => (gpu, Sharing::Whole, count(capacity)),
    }
}

/// The model and the GPU count the NFD rules' per-device label gives.
fn intel_spec(labels: &mut Labels<'_>) -> (GpuSpec, Option<u64>) {
    // `0380-0bd5` -> (0x0bd5, count); display (0300) and other (0380) controllers only.
    let devices: Vec<(u16, Option<u64>)> = labels
        .under("gpu.intel.com/device-id.")
        .filter_map(|(rest, value)| {
            let (id, kind) = rest.rsplit_once('.')?;
            let (class, device) = id.split_once('-')?;
            if !matches!(class, "0300" | "0380") {
                return None;
            }
            let device = hex_id(device)?;
            Some((
                device,
                (kind == "count")
                    .then(|| value.trim().parse().ok())
                    .flatten(),
            ))
        })
        .collect();
    let count_of = |wanted: u16| {
        devices
            .iter()
            .filter(|(device, _)| *device == wanted)
            .find_map(|(_, count)| *count)
    };
    let known = devices
        .iter()
        .find_map(|(device, _)| intel_names::device_name(*device).map(|name| (*device, name)));
    if let Some(product) = labels.text("gpu.intel.com/product") {
        let device_count = known.and_then(|(device, _)| count_of(device));
        if let Some(name) = intel_names::product_name(product) {
            return (spec("Intel", name, labels), device_count);
        }
        let name = format!("Intel {}", product.replace('_', " "));
        labels.note_name(format!(
            "Intel product label {product:?} is no GPU accelfed knows; published as {name:?}"
        ));
        return (
            GpuSpec::new(Text::literal("Intel"), model(&name)),
            device_count,
        );
    }
    if let Some((device, name)) = known {
        return (spec("Intel", name, labels), count_of(device));
    }
    let (name, device_count) = match devices.first() {
        Some((device, _)) => (format!("Intel GPU 8086:{device:04x}"), count_of(*device)),
        None => ("Intel GPU".to_owned(), None),
    };
    labels.note_name(format!(
        "Intel GPUs whose labels name no GPU accelfed knows (is the Intel GPU plugin's NFD rule installed?); published as {name:?}"
    ));
    (
        GpuSpec::new(Text::literal("Intel"), model(&name)),
        device_count,
    )
}

/// A GPU resource no reader knows: whole GPUs of the model the node's labels name.
pub(super) fn unknown(resource: &str, capacity: u64, labels: &mut Labels<'_>) -> Read {
    let gpu = match resource.split_once('/').map(|(domain, _)| domain) {
        Some("amd.com") => amd_spec(labels),
        Some("gpu.intel.com") => intel_spec(labels).0,
        _ if labels.text("nvidia.com/gpu.product").is_some() => {
            nvidia_spec("nvidia.com/gpu", labels)
        }
        _ => GpuSpec::new(Text::literal("NVIDIA"), GpuModel::literal("NVIDIA GPU")),
    };
    labels.note_name(format!(
        "GPU resource {resource} is not one accelfed reads; its devices are published and metered as whole GPUs of the model the node's labels name"
    ));
    (gpu, Sharing::Whole, count(capacity))
}

/// A PCI device id label, `74a1` or `0x74A1`.
fn hex_id(text: &str) -> Option<u16> {
    let text = text.trim();
    let text = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    (text.len() == 4)
        .then(|| u16::from_str_radix(text, 16).ok())
        .flatten()
}

fn model(name: &str) -> GpuModel {
    GpuModel::new(name).unwrap_or_else(|_| GpuModel::literal("GPU"))
}

#[cfg(test)]
mod tests {
    use super::super::api::Node;
    use super::super::nodes::read_node;
    use super::*;

    fn node(name: &str, capacity: &str, labels: &str) -> Node {
        serde_json::from_str(&format!(
            r#"{{"metadata":{{"name":"{name}","labels":{labels}}},
                "status":{{"capacity":{capacity},"allocatable":{capacity},
                          "conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn a_gpu_resource_nobody_reads_is_published_whole_and_reported_once() {
        let mut warnings = Vec::new();
        for name in ["kv-1", "kv-2"] {
            let read = read_node(
                &node(
                    name,
                    r#"{"nvidia.com/pgpu":"2","nvidia.com/rdma_shared_device_a":"63"}"#,
                    r#"{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB"}"#,
                ),
                &[],
                &mut warnings,
            )
            .unwrap();
            // The network resource is not a GPU; the unknown GPU resource is, by its node's model.
            assert_eq!(read.resources.len(), 1);
            assert_eq!(read.resources[0].resource, "nvidia.com/pgpu");
            assert_eq!(
                read.resources[0].gpu.model.as_str(),
                "NVIDIA A100-SXM4-40GB"
            );
            assert_eq!(read.resources[0].physical, GpuCount::whole(2));
        }
        assert_eq!(
            warnings,
            [
                "node \"kv-1\": GPU resource nvidia.com/pgpu is not one accelfed reads; its devices are published and metered as whole GPUs of the model the node's labels name"
            ]
        );
    }

    #[test]
    fn amd_without_labels_and_intel_with_an_unknown_id_are_published_and_reported() {
        let mut warnings = Vec::new();
        let amd = read_node(
            &node("a", r#"{"amd.com/gpu":"4"}"#, "{}"),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(amd.resources[0].gpu.model.as_str(), "AMD GPU");
        let intel = read_node(
            &node(
                "i",
                r#"{"gpu.intel.com/i915":"1"}"#,
                r#"{"gpu.intel.com/device-id.0300-9a49.present":"true","gpu.intel.com/device-id.0300-9a49.count":"1"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(intel.resources[0].gpu.model.as_str(), "Intel GPU 8086:9a49");
        assert_eq!(intel.resources[0].physical, GpuCount::whole(1));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("published as \"AMD GPU\""),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains("\"Intel GPU 8086:9a49\""),
            "{warnings:?}"
        );
        assert_eq!(hex_id("0x74A1"), Some(0x74a1));
        assert_eq!(hex_id("74a"), None);
    }
}
