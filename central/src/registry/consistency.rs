//! What a pushed document must hold together beyond its shape: its IDs in the pushing site's
//! namespace (an `urn:accelfed:<site>:` ID naming another site would speak for that site in the
//! federation's views), every association naming an entity of the same document, and no count of
//! used or free resources above its total, and one physical GPU count at every level
//! ([`physical::check`]). Pure; [`super::check::Checker`] runs it after the
//! schema and the site.
//!
//! A refusal is one line of a response and of the log, so it never quotes a value of unbounded
//! length: an entity's own ID is quoted whole only after the LDAP check has bounded it (an RDN
//! of at most `MAX_RDN_BYTES`, so it can be found in the document), and association targets,
//! which nothing bounds, are quoted as excerpts ([`excerpt`]).

use std::collections::HashSet;

use accelfed_schemas::excerpt::excerpt;
use accelfed_schemas::glue::physical;
use accelfed_schemas::glue::validate::too_long_for_ldap;

use accelfed_schemas::glue::entity::{Class, Entity, Value};
use accelfed_schemas::glue::ids::Ids;
use accelfed_schemas::names::SiteName;

/// The `(total, parts of it)` attribute groups whose parts may not exceed the total.
const BOUNDED: &[(&str, &[&str])] = &[
    (
        "TotalAcceleratorSlots",
        &["UsedAcceleratorSlots", "FreeAcceleratorSlots"],
    ),
    (
        "TotalAccelerators",
        &["UsedAccelerators", "FreeAccelerators"],
    ),
    (
        "TotalPhysicalAccelerators",
        &["UsedPhysicalAccelerators", "FreePhysicalAccelerators"],
    ),
    ("TotalInstances", &["UsedInstances", "UnavailableInstances"]),
];

/// The scheme of the IDs accelfed makes; an ID in it names its site.
const ACCELFED_SCHEME: &str = "urn:accelfed:";

/// The first inconsistency of `entities`, pushed with `site`'s token, as a sentence naming the
/// entity (class and ID) and the attribute or association.
pub fn first_inconsistency(entities: &[Entity<'_>], site: &str) -> Option<String> {
    let own = SiteName::new(site).ok().map(|site| Ids::new(&site));
    let ids: HashSet<&str> = entities.iter().map(|e| e.id.as_str()).collect();
    entities
        .iter()
        .find_map(|entity| {
            // The registry's LDAP view and the BDIIs it feeds must hold every entry. Checked first:
            // an ID too long for them is refused for its length whatever its namespace.
            too_long_for_ldap(entity.class, &entity.id)
                .map(|err| err.to_string())
                .or_else(|| namespace(entity, own.as_ref(), site))
                .or_else(|| dangling(entity, &ids))
                .or_else(|| over_total(entity))
        })
        // One physical count at every level: the library's checker, which every rendering of a
        // snapshot has passed too, so a pushed document is held to what accelfed publishes.
        .or_else(|| physical::check(entities).err().map(|err| err.to_string()))
}

fn namespace(entity: &Entity<'_>, own: Option<&Ids>, site: &str) -> Option<String> {
    let id = entity.id.as_str();
    let foreign =
        id.starts_with(ACCELFED_SCHEME) && own.is_none_or(|own| !id.starts_with(own.prefix()));
    foreign.then(|| {
        let prefix = own.map_or_else(
            || format!("{ACCELFED_SCHEME}{site}:"),
            |own| own.prefix().to_owned(),
        );
        format!(
            "{} {id}: the ID is not in site {:?}'s namespace ({}); a site publishes only its own \
             entities",
            entity.class.name(),
            excerpt(site),
            excerpt(&prefix)
        )
    })
}

fn dangling(entity: &Entity<'_>, ids: &HashSet<&str>) -> Option<String> {
    // A policy's UserDomain is a VO's name, not an entity of the document.
    let (class, target) = entity
        .associations
        .iter()
        .find(|(class, target)| *class != Class::UserDomain && !ids.contains(target.as_str()))?;
    Some(format!(
        "{} {}: its association to {} {} names no entity of the document",
        entity.class.name(),
        entity.id,
        class.name(),
        excerpt(target)
    ))
}

fn over_total(entity: &Entity<'_>) -> Option<String> {
    let number = |name: &str| match entity.attribute(name)? {
        Value::Int(n) => Some(*n as f64),
        Value::Count(n) => Some(n.get()),
        _ => None,
    };
    BOUNDED.iter().find_map(|(total_name, parts)| {
        let total = number(total_name)?;
        let sum: f64 = parts.iter().filter_map(|part| number(part)).sum();
        // A hundredth of slack for counts rendered with 3 decimals (1/7 + 6/7 = 1.001).
        (sum > total + 0.01).then(|| {
            let parts: Vec<String> = parts
                .iter()
                .filter_map(|part| number(part).map(|n| format!("{part} {n}")))
                .collect();
            format!(
                "{} {}: {} exceed {total_name} {total}",
                entity.class.name(),
                entity.id,
                parts.join(" + ")
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::glue::{from_json, sample};
    use accelfed_schemas::render::json;

    use super::*;

    fn entities(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<Entity<'static>> {
        let mut document = json::document(&sample::snapshot("SAMPLE-SITE"));
        edit(&mut document);
        from_json::from_value(&document).unwrap().entities
    }

    #[test]
    fn the_sample_holds_together() {
        assert_eq!(first_inconsistency(&entities(|_| {}), "SAMPLE-SITE"), None);
    }

    #[test]
    fn an_id_in_another_sites_namespace_is_named() {
        let found = entities(|doc| {
            doc["ComputingShareAccelerator"][0]["ID"] =
                "urn:accelfed:OTHER-SITE:share-accelerator:hpc/gpu".into();
        });
        let why = first_inconsistency(&found, "SAMPLE-SITE").unwrap();
        assert!(
            why.starts_with(
                "ComputingShareAccelerator urn:accelfed:OTHER-SITE:share-accelerator:hpc/gpu: the \
                 ID is not in site \"SAMPLE-SITE\"'s namespace (urn:accelfed:SAMPLE-SITE:)"
            ),
            "{why}"
        );
    }

    /// An ID too long for LDAP is refused for its length even outside the site's namespace, and
    /// neither that refusal nor one of a huge association target quotes the whole value.
    #[test]
    fn length_comes_before_namespace_and_ids_are_quoted_as_excerpts() {
        let huge = "x".repeat(100_000);
        let found = entities(|doc| {
            doc["ComputingShareAccelerator"][0]["ID"] =
                format!("urn:accelfed:OTHER-SITE:{huge}").into();
        });
        let why = first_inconsistency(&found, "SAMPLE-SITE").unwrap();
        assert!(why.contains("LDAP RDN"), "{why}");
        assert!(why.len() < 400, "{} bytes", why.len());

        let found = entities(|doc| {
            doc["ComputingShare"][0]["Associations"]["ExecutionEnvironment"] =
                serde_json::json!([huge.clone()]);
        });
        let why = first_inconsistency(&found, "SAMPLE-SITE").unwrap();
        assert!(why.contains("names no entity"), "{why}");
        assert!(why.len() < 300, "{} bytes", why.len());
    }

    #[test]
    fn an_association_to_a_missing_entity_is_named() {
        let found = entities(|doc| {
            doc["ComputingShare"][0]["Associations"]["ExecutionEnvironment"] =
                serde_json::json!(["urn:accelfed:SAMPLE-SITE:ee:hpc/nowhere"]);
        });
        let why = first_inconsistency(&found, "SAMPLE-SITE").unwrap();
        assert!(
            why.contains("ExecutionEnvironment urn:accelfed:SAMPLE-SITE:ee:hpc/nowhere"),
            "{why}"
        );
    }

    /// Issue #28: a site total that is not the sum of its services' managers.
    #[test]
    fn two_physical_truths_are_named_with_both_numbers() {
        let found = entities(|doc| {
            doc["AdminDomain"][0]["OtherInfo"]["TotalPhysicalAccelerators:NVIDIA A100-SXM4-80GB"] =
                "7".into();
        });
        let why = first_inconsistency(&found, "SAMPLE-SITE").unwrap();
        assert!(
            why.starts_with(
                "AdminDomain SAMPLE-SITE: 7 physical NVIDIA A100-SXM4-80GB GPUs; the accelerators \
                 of its services' managers: 24"
            ),
            "{why}"
        );
    }

    #[test]
    fn free_above_total_is_named() {
        let found = entities(|doc| {
            doc["ComputingManagerAccelerator"][0]["FreeAcceleratorSlots"] = 1000.into();
        });
        let why = first_inconsistency(&found, "SAMPLE-SITE").unwrap();
        assert!(
            why.contains("FreeAcceleratorSlots 1000") && why.contains("TotalAcceleratorSlots"),
            "{why}"
        );
    }
}
