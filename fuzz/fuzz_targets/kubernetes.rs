//! The Kubernetes API's list pages as the provider and the meter read them: nodes, pods,
//! namespaces and resource quotas (parts of the input split at NUL bytes; an empty part is an empty
//! list). Whatever is read maps to a GLUE2 service and to pod observations.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use accelfed_fuzz::{now, parts};
use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::api::{Namespace, Node, Pod, ResourceQuota};
use accelfed_provider::kubernetes::{
    Inventory, KubernetesConfig, observe_inventory, read_node, read_page, read_pod, service,
};
use accelfed_schemas::names::SiteName;
use libfuzzer_sys::fuzz_target;

fn config() -> &'static KubernetesConfig {
    static CONFIG: OnceLock<KubernetesConfig> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let text = include_str!("../../examples/kubernetes-site.toml");
        let mut config =
            Config::parse(Path::new("kubernetes-site.toml"), text).expect("the example");
        config.kubernetes.remove(0)
    })
}

/// Reads one list page; `None` when the text is not one (the client then fails the listing).
fn page<'de, T: serde::Deserialize<'de>, U>(
    part: &'de [u8],
    read: &mut impl FnMut(T, &mut Vec<String>) -> Option<U>,
    warnings: &mut Vec<String>,
) -> Option<Vec<U>> {
    let mut kept = Vec::new();
    if part.is_empty() {
        return Some(kept);
    }
    let text = std::str::from_utf8(part).ok()?;
    read_page(text, read, &mut kept, warnings).ok()?;
    Some(kept)
}

fuzz_target!(|data: &[u8]| {
    let [nodes, pods, namespaces, quotas] = parts::<4>(data);
    let tolerated = &config().tolerated_taints;
    let mut warnings = Vec::new();
    let Some(nodes) = page(
        nodes,
        &mut |node: Node, warnings| read_node(&node, tolerated, warnings),
        &mut warnings,
    ) else {
        return;
    };
    let Some(pods) = page(
        pods,
        &mut |pod: Pod<'_>, warnings| read_pod(&pod, warnings),
        &mut warnings,
    ) else {
        return;
    };
    let Some(namespaces) = page(namespaces, &mut |ns: Namespace, _| Some(ns), &mut warnings) else {
        return;
    };
    let Some(quotas) = page(quotas, &mut |q: ResourceQuota, _| Some(q), &mut warnings) else {
        return;
    };
    let inventory = Inventory {
        nodes,
        pods,
        cpu: Default::default(),
        namespaces,
        quotas,
        warnings,
    };
    let mapped = service(config(), &inventory);
    for capacity in mapped.totals.values() {
        assert!(capacity.total.get().is_finite(), "{capacity:?}");
    }
    let site = SiteName::new("FUZZ-SITE").expect("a valid name");
    let now = now();
    let since = now - chrono::Duration::days(62);
    let metered = observe_inventory(config(), &site, &inventory, None, since, now);
    for observation in &metered.observations {
        if let Some(end) = observation.end {
            assert!(
                end >= observation.start,
                "a pod observed to end before it started: {observation:?}"
            );
        }
    }
});
