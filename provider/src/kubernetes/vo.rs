//! Which VO each namespace serves, and the GPU quota each namespace has.
//!
//! VO, in order: the configuration's `namespaces` table, the namespace label named by `vo_label`,
//! the annotation named by `vo_annotation`. A value that is not a valid VO name is reported with
//! the namespace's name and the next source is tried. A namespace with none has no share; its pods
//! still count in the cluster's totals.
//!
//! Quota: a ResourceQuota's `spec.hard` `requests.<resource>` or `limits.<resource>` (and the bare
//! `<resource>` form the API also accepts) caps a namespace's devices of that resource; several
//! quotas in one namespace all apply, so the smallest wins.

use std::collections::BTreeMap;

use toml::Spanned;

use accelfed_schemas::glue::VoAccess;
use accelfed_schemas::names::VoName;

use super::api::{Namespace, ResourceQuota, is_gpu_resource};
use super::config::KubernetesConfig;
use super::quantity::whole;

/// Namespace -> VO.
pub fn namespace_vos(
    config: &KubernetesConfig,
    namespaces: &[Namespace],
    warnings: &mut Vec<String>,
) -> BTreeMap<String, VoAccess> {
    let mut vos = BTreeMap::new();
    for namespace in namespaces {
        let meta = &namespace.metadata;
        if let Some(configured) = config.namespaces.get(&meta.name) {
            vos.insert(
                meta.name.clone(),
                VoAccess {
                    vo: configured.vo.clone(),
                    fqan: configured.fqan.clone(),
                },
            );
            continue;
        }
        let candidates = [
            config
                .vo_label
                .as_ref()
                .map(Spanned::get_ref)
                .and_then(|key| meta.labels.get(key).map(|value| ("label", key, value))),
            config
                .vo_annotation
                .as_ref()
                .map(Spanned::get_ref)
                .and_then(|key| {
                    meta.annotations
                        .get(key)
                        .map(|value| ("annotation", key, value))
                }),
        ];
        for (what, key, value) in candidates.into_iter().flatten() {
            match VoName::new(value.trim()) {
                Ok(vo) => {
                    vos.insert(meta.name.clone(), VoAccess::new(vo));
                    break;
                }
                Err(err) => warnings.push(format!(
                    "namespace {:?}: {what} {key}={value:?} is not a VO name ({err}); ignored",
                    meta.name
                )),
            }
        }
    }
    // Namespaces named in the configuration but not listed still map (their pods may be listed).
    for (name, configured) in &config.namespaces {
        vos.entry(name.clone()).or_insert_with(|| VoAccess {
            vo: configured.vo.clone(),
            fqan: configured.fqan.clone(),
        });
    }
    vos
}

/// Namespace -> resource -> the most devices its quotas allow.
pub fn namespace_quotas(
    quotas: &[ResourceQuota],
    warnings: &mut Vec<String>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut caps: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for quota in quotas {
        let meta = &quota.metadata;
        for (key, value) in &quota.spec.hard {
            let resource = key
                .strip_prefix("requests.")
                .or_else(|| key.strip_prefix("limits."))
                .unwrap_or(key);
            if !is_gpu_resource(resource) {
                continue;
            }
            match whole(value) {
                Ok(devices) => {
                    let cap = caps
                        .entry(meta.namespace.clone())
                        .or_default()
                        .entry(resource.to_owned())
                        .or_insert(devices);
                    *cap = (*cap).min(devices);
                }
                Err(err) => warnings.push(format!(
                    "resource quota {}/{}: {key}: {err}; ignored",
                    meta.namespace, meta.name
                )),
            }
        }
    }
    caps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(json: &str) -> ResourceQuota {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_smallest_quota_wins_and_garbage_is_reported() {
        let quotas = [
            quota(
                r#"{"metadata":{"name":"a","namespace":"ns"},"spec":{"hard":{"requests.nvidia.com/gpu":"8","cpu":"100"}}}"#,
            ),
            quota(
                r#"{"metadata":{"name":"b","namespace":"ns"},"spec":{"hard":{"limits.nvidia.com/gpu":"4"}}}"#,
            ),
            quota(
                r#"{"metadata":{"name":"c","namespace":"other"},"spec":{"hard":{"requests.nvidia.com/gpu":"two"}}}"#,
            ),
        ];
        let mut warnings = Vec::new();
        let caps = namespace_quotas(&quotas, &mut warnings);
        assert_eq!(caps["ns"]["nvidia.com/gpu"], 4);
        assert!(!caps.contains_key("other"));
        assert_eq!(
            warnings,
            vec![
                "resource quota other/c: requests.nvidia.com/gpu: quantity \"two\" is not a whole number of devices; ignored"
            ]
        );
    }
}
