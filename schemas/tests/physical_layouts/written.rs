//! What a rendered JSON document says, read as a site's reader reads it: the typed physical
//! counts, and the written parts of each manager's physical total.

use std::collections::BTreeMap;

use accelfed_schemas::glue::SITE_TOTAL_PREFIX;

/// The typed physical attributes of every entity of a JSON document are whole numbers.
pub fn typed_physical_counts_are_whole(document: &serde_json::Value) -> Result<(), String> {
    let names = [
        "PhysicalAccelerators",
        "TotalPhysicalAccelerators",
        "UsedPhysicalAccelerators",
        "FreePhysicalAccelerators",
    ];
    for (class, entities) in document.as_object().unwrap() {
        for entity in entities.as_array().into_iter().flatten() {
            for name in names {
                if let Some(value) = entity.get(name)
                    && !value.is_u64()
                {
                    return Err(format!("{class} {}: {name} is {value}", entity["ID"]));
                }
            }
        }
    }
    Ok(())
}

/// A physical count as written, in thousandths: the typed whole count, or the OtherInfo decimal.
fn written_thousandths(entity: &serde_json::Value, name: &str) -> Option<u64> {
    let value = match entity.get(name) {
        Some(typed) => typed.as_u64().map(|n| n as f64),
        None => entity["OtherInfo"][name].as_str()?.parse().ok(),
    }?;
    Some((value * 1000.0).round() as u64)
}

/// Per manager and model, its accelerators' `TotalPhysicalAccelerators` as written add up to the
/// total the manager states, to the digit (rounded together, never 0.286 + 0.286 + 0.429 for 1).
pub fn written_parts_add_up(document: &serde_json::Value) -> Result<(), String> {
    let families = [
        ("ComputingManager", "ComputingManagerAccelerator"),
        ("CloudComputingManager", "CloudComputingManagerAccelerator"),
    ];
    for (manager_class, accelerator_class) in families {
        for manager in document[manager_class].as_array().into_iter().flatten() {
            let mut parts: BTreeMap<String, u64> = BTreeMap::new();
            for accelerator in document[accelerator_class].as_array().into_iter().flatten() {
                let owners = &accelerator["Associations"][manager_class];
                if !owners
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|o| *o == manager["ID"])
                {
                    continue;
                }
                let model = accelerator["Model"].as_str().unwrap_or_default().to_owned();
                let written = written_thousandths(accelerator, "TotalPhysicalAccelerators")
                    .ok_or_else(|| format!("{}: no physical total", accelerator["ID"]))?;
                *parts.entry(model).or_default() += written;
            }
            for (model, sum) in parts {
                let key = format!("{SITE_TOTAL_PREFIX}{model}");
                let stated = manager["OtherInfo"][&key]
                    .as_str()
                    .and_then(|t| t.parse::<f64>().ok());
                let stated = stated.map(|v| (v * 1000.0).round() as u64);
                if stated != Some(sum) {
                    return Err(format!(
                        "{} states {key} {stated:?} thousandths, its accelerators add up to {sum}",
                        manager["ID"]
                    ));
                }
            }
        }
    }
    Ok(())
}
