//! Offers read back from GLUE 2.0 LDAP entries (pure): what `accelfed query --ldap` makes of a
//! BDII's answer.
//!
//! A GLUE 2.0 server has no accelerator classes; the renderer folds each GPU into
//! `GLUE2EntityOtherInfo: GPU.<lid>.<Attribute>=<value>` on its execution environment (a cloud
//! flavor, or a batch node type), see `schemas/src/render/ldif/gpu_info.rs`. Each `<lid>` with a
//! `Model` is one offer. VOs come from the mapping policies (`VO:<name>` rules) under the shares
//! whose `GLUE2ShareResourceForeignKey` names the environment; the site and service come from the
//! entry's DN (`GLUE2DomainID=<site>` in a top-BDII's layout).
//!
//! What GLUE 2.0 does not carry next to the environment is left out: a cloud flavor's free/total
//! GPUs (the manager holds them per model) are `None` here.
//!
//! A count that is published but is no GPU count (`-1`, `NaN`, `many`, past
//! [`GpuCount::MAX`]) leaves its GPU's offer out, with the reason, as the registry does with
//! documents ([`InvalidCount`]): an answer never shows a count the server did not publish.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use accelfed_schemas::render::ldif::dn::unescape_value;

use accelfed_schemas::render::ldif::dn::{dn_key, rdns};

use super::entry::DirEntry;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::unit::{Facts, Unit};
use accelfed_schemas::offer::{InvalidCount, Offer, ServiceKind};
/// Offers from the environments, with VOs from `policies` and `shares` (all as searched), and why
/// any GPU's offer was left out.
pub fn offers(
    environments: &[DirEntry],
    policies: &[DirEntry],
    shares: &[DirEntry],
) -> (Vec<Offer>, Vec<InvalidCount>) {
    let vos = vos_by_resource(policies, shares);
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for entry in environments {
        let resource_id = first(entry, "GLUE2ResourceID")
            .unwrap_or_default()
            .to_owned();
        let site = rdn_value(&entry.dn, "GLUE2DomainID")
            .or_else(|| site_from_id(&resource_id))
            .unwrap_or_default();
        let service_id = rdn_value(&entry.dn, "GLUE2ServiceID").unwrap_or_default();
        let kind = if first(entry, "GLUE2ExecutionEnvironmentVirtualMachine")
            .is_some_and(|v| v.eq_ignore_ascii_case("TRUE"))
        {
            ServiceKind::Cloud
        } else {
            ServiceKind::Batch
        };
        let environment = Environment {
            entry,
            site,
            service_id,
            kind,
            expires: expires(entry),
            vos: vos.get(resource_id.as_str()).cloned().unwrap_or_default(),
            resource_id,
        };
        for (lid, facts) in &gpu_facts(entry) {
            match environment.offer(lid, facts) {
                Ok(Some(offer)) => out.push(offer),
                Ok(None) => {}
                Err(reason) => skipped.push(reason),
            }
        }
    }
    (out, skipped)
}

/// What the offers of one environment entry share.
struct Environment<'e> {
    entry: &'e DirEntry,
    site: String,
    service_id: String,
    kind: ServiceKind,
    resource_id: String,
    expires: DateTime<Utc>,
    vos: Vec<String>,
}

impl Environment<'_> {
    /// The offer of the GPU `lid` with `facts`; `None` when it names no model.
    fn offer(
        &self,
        lid: &str,
        facts: &BTreeMap<String, String>,
    ) -> Result<Option<Offer>, InvalidCount> {
        let Some(model) = facts.get("Model") else {
            return Ok(None);
        };
        let invalid = |what: String, source| InvalidCount {
            entity: self.entry.dn.clone(),
            attribute: format!("GLUE2EntityOtherInfo GPU.{lid}.{what}"),
            source,
        };
        let count = |key: &str| -> Result<Option<GpuCount>, InvalidCount> {
            facts
                .get(key)
                .map(|value| value.parse::<GpuCount>())
                .transpose()
                .map_err(|source| invalid(key.to_owned(), source))
        };
        // A flavor's devices (`Number`) or a node type's slots, the first published; physical
        // GPUs beside them.
        let mut slots = GpuCount::ZERO;
        for key in ["Number", "LogicalAccelerators", "PhysicalAccelerators"] {
            if let Some(found) = count(key)? {
                slots = found;
                break;
            }
        }
        let unit = Unit::of(Facts {
            model,
            virtualization: facts.get("VirtualizationType").map_or("", String::as_str),
            mig_profile: facts.get("MIGProfile").map(String::as_str),
            slot_share: facts.get("SlotShare").map(String::as_str),
            slots,
            physical: count("PhysicalAccelerators")?,
        });
        let free = count("FreeAcceleratorSlots")?;
        let total = count("TotalAcceleratorSlots")?;
        let physical = |slots: Option<GpuCount>, key: &str| {
            slots
                .map(|slots| unit.physical(slots))
                .transpose()
                .map_err(|source| invalid(format!("{key} in physical GPUs"), source))
        };
        let entry = self.entry;
        Ok(Some(Offer {
            site: self.site.clone(),
            service_id: self.service_id.clone(),
            service_kind: self.kind,
            resource_id: self.resource_id.clone(),
            resource_name: first(entry, "GLUE2EntityName")
                .unwrap_or(&self.resource_id)
                .to_owned(),
            gpus_each: unit.gpus_each,
            slots_each: unit.slots_each,
            physical_each: unit.physical_each,
            gets: unit.gets.clone(),
            vendor: facts.get("Vendor").cloned().unwrap_or_default(),
            model: model.clone(),
            memory_mb: facts.get("Memory").and_then(|v| v.parse().ok()),
            compute_capability: facts.get("ComputeCapability").cloned(),
            sharing: facts
                .get("VirtualizationType")
                .cloned()
                .unwrap_or_else(|| "none".to_owned()),
            mig_profile: facts.get("MIGProfile").cloned(),
            cpus: first(entry, "GLUE2ExecutionEnvironmentLogicalCPUs").and_then(|v| v.parse().ok()),
            ram_mb: first(entry, "GLUE2ExecutionEnvironmentMainMemorySize")
                .and_then(|v| v.parse().ok()),
            free,
            total,
            free_physical: physical(free, "FreeAcceleratorSlots")?,
            total_physical: physical(total, "TotalAcceleratorSlots")?,
            slot_share: unit.slot_share.clone(),
            // GLUE 2.0 keeps each GPU on its environment: that GPU is its own pool.
            pool: format!("{} GPU.{lid}", self.resource_id),
            vos: self.vos.clone(),
            vo_free: Vec::new(),
            expires: self.expires,
            fresh: false,
        }))
    }
}

fn first<'e>(entry: &'e DirEntry, name: &str) -> Option<&'e str> {
    entry
        .values(name)
        .and_then(|values| values.iter().next())
        .map(String::as_str)
}

/// The unescaped value of the first RDN of type `kind` in `dn`.
fn rdn_value(dn: &str, kind: &str) -> Option<String> {
    rdns(dn).into_iter().find_map(|rdn| {
        let (name, value) = rdn.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case(kind)
            .then(|| unescape_value(value).ok())
            .flatten()
    })
}

/// The site of an accelfed ID (`urn:accelfed:<site>:...`), for servers in a site BDII's layout.
fn site_from_id(id: &str) -> Option<String> {
    let rest = id.strip_prefix("urn:accelfed:")?;
    rest.split_once(':').map(|(site, _)| site.to_owned())
}

/// `GPU.<lid>.<Attribute>=<value>` pairs grouped by `<lid>` (split at the key's first and last
/// dot: attribute names have none, local ids may).
fn gpu_facts(entry: &DirEntry) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for info in entry.values("GLUE2EntityOtherInfo").into_iter().flatten() {
        let Some((key, value)) = info.split_once('=') else {
            continue;
        };
        let Some(rest) = key.strip_prefix("GPU.") else {
            continue;
        };
        let Some((lid, attribute)) = rest.rsplit_once('.') else {
            continue;
        };
        out.entry(lid.to_owned())
            .or_default()
            .insert(attribute.to_owned(), value.to_owned());
    }
    out
}

/// When the entry stops being fresh: its CreationTime plus Validity; never, when it says neither.
fn expires(entry: &DirEntry) -> DateTime<Utc> {
    let created = first(entry, "GLUE2EntityCreationTime")
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    let validity = first(entry, "GLUE2EntityValidity").and_then(|v| v.parse::<i64>().ok());
    match (created, validity) {
        (Some(created), Some(validity)) => created
            .checked_add_signed(chrono::TimeDelta::seconds(validity))
            .unwrap_or(DateTime::<Utc>::MAX_UTC),
        _ => DateTime::<Utc>::MAX_UTC,
    }
}

/// Resource ID -> VOs: policies sit under their share; a share names its resources.
fn vos_by_resource<'s>(
    policies: &[DirEntry],
    shares: &'s [DirEntry],
) -> HashMap<&'s str, Vec<String>> {
    let mut by_share: HashMap<String, Vec<String>> = HashMap::new();
    for policy in policies {
        let parent = dn_key(&rdns(&policy.dn)[1..].join(","));
        for rule in policy.values("GLUE2PolicyRule").into_iter().flatten() {
            if let Some(vo) = rule.strip_prefix("VO:") {
                let vos = by_share.entry(parent.clone()).or_default();
                if !vos.iter().any(|have| have == vo) {
                    vos.push(vo.to_owned());
                }
            }
        }
    }
    let mut out: HashMap<&str, Vec<String>> = HashMap::new();
    for share in shares {
        let Some(vos) = by_share.get(&dn_key(&share.dn)) else {
            continue;
        };
        for key in [
            "GLUE2ShareResourceForeignKey",
            "GLUE2ComputingShareExecutionEnvironmentForeignKey",
        ] {
            for resource in share.values(key).into_iter().flatten() {
                let list = out.entry(resource.as_str()).or_default();
                for vo in vos {
                    if !list.contains(vo) {
                        list.push(vo.clone());
                    }
                }
            }
        }
    }
    for list in out.values_mut() {
        list.sort();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dn: &str, attrs: &[(&str, &str)]) -> DirEntry {
        let mut entry = DirEntry::new(dn);
        for (name, value) in attrs {
            entry.add(name, *value);
        }
        entry
    }

    #[test]
    fn each_gpu_of_an_environment_is_an_offer_with_its_shares_vos() {
        let env = entry(
            "GLUE2ResourceID=r1,GLUE2ManagerID=m,GLUE2ServiceID=svc\\,1,GLUE2GroupID=resource,\
             GLUE2DomainID=SITE\\,X,GLUE2GroupID=grid,o=glue",
            &[
                ("GLUE2ResourceID", "r1"),
                ("GLUE2EntityName", "g1.large"),
                ("GLUE2ExecutionEnvironmentVirtualMachine", "TRUE"),
                ("GLUE2ExecutionEnvironmentLogicalCPUs", "16"),
                ("GLUE2EntityCreationTime", "2026-01-01T00:00:00Z"),
                ("GLUE2EntityValidity", "3600"),
                ("GLUE2EntityOtherInfo", "GPU.g1.large.Model=NVIDIA A100"),
                ("GLUE2EntityOtherInfo", "GPU.g1.large.Vendor=NVIDIA"),
                ("GLUE2EntityOtherInfo", "GPU.g1.large.Number=0.5"),
                ("GLUE2EntityOtherInfo", "GPU.g1.large.Memory=40960"),
                ("GLUE2EntityOtherInfo", "other=1"),
            ],
        );
        let share = entry(
            "GLUE2ShareID=s,GLUE2ServiceID=svc\\,1,GLUE2GroupID=resource,GLUE2DomainID=SITE\\,X,GLUE2GroupID=grid,o=glue",
            &[("GLUE2ShareResourceForeignKey", "r1")],
        );
        let policy = entry(
            "GLUE2PolicyID=p,GLUE2ShareID=s,GLUE2ServiceID=svc\\2C1,GLUE2GroupID=resource,GLUE2DomainID=SITE\\2CX,GLUE2GroupID=grid,o=glue",
            &[
                ("GLUE2PolicyRule", "VO:cms"),
                ("GLUE2PolicyRule", "VO:atlas"),
                ("GLUE2PolicyRule", "VOMS:/atlas"),
            ],
        );
        let (offers, skipped) = offers(&[env], &[policy], &[share]);
        assert_eq!(skipped, []);
        assert_eq!(offers.len(), 1);
        let offer = &offers[0];
        assert_eq!(offer.site, "SITE,X");
        assert_eq!(offer.service_id, "svc,1");
        assert_eq!(offer.service_kind, ServiceKind::Cloud);
        assert_eq!(offer.resource_name, "g1.large");
        assert_eq!(offer.gpus_each, GpuCount::new(0.5).unwrap());
        assert_eq!(offer.model, "NVIDIA A100");
        assert_eq!(offer.memory_mb, Some(40_960));
        assert_eq!(offer.cpus, Some(16));
        assert_eq!(offer.vos, ["atlas", "cms"]);
        assert_eq!(offer.expires.to_rfc3339(), "2026-01-01T01:00:00+00:00");
    }

    #[test]
    fn entries_without_gpu_models_give_nothing() {
        let env = entry(
            "GLUE2ResourceID=r,o=glue",
            &[("GLUE2EntityOtherInfo", "GPU.x.Number=2")],
        );
        assert_eq!(offers(&[env], &[], &[]), (Vec::new(), Vec::new()));
    }

    #[test]
    fn a_gpu_whose_count_is_no_count_is_left_out_with_the_reason() {
        let env = |number: &str| {
            entry(
                "GLUE2ResourceID=r,o=glue",
                &[
                    ("GLUE2ResourceID", "r"),
                    ("GLUE2EntityOtherInfo", "GPU.a.Model=NVIDIA A100"),
                    ("GLUE2EntityOtherInfo", &format!("GPU.a.Number={number}")),
                    ("GLUE2EntityOtherInfo", "GPU.b.Model=Tesla T4"),
                    ("GLUE2EntityOtherInfo", "GPU.b.Number=2"),
                ],
            )
        };
        for bad in ["-1", "NaN", "many", "1e9"] {
            let (offers, skipped) = offers(&[env(bad)], &[], &[]);
            // The other GPU of the same entry is still offered.
            assert_eq!(offers.len(), 1, "{bad}");
            assert_eq!(offers[0].gpus_each, GpuCount::whole(2));
            let [reason] = skipped.as_slice() else {
                panic!("{bad}: {skipped:?}");
            };
            let text = reason.to_string();
            assert!(
                text.starts_with("GLUE2ResourceID=r,o=glue: GLUE2EntityOtherInfo GPU.a.Number: "),
                "{text}"
            );
            assert!(text.ends_with("its offer is left out"), "{text}");
        }
    }
}
