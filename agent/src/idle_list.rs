//! `accelfed idle`: the allocations idle right now, from the agent's JSON document (`/v1/state`).
//!
//! An allocation is one holder on one place (a GPU, a MIG instance or a vGPU) that holds it now
//! and whose windows have been idle since `idle_since_unix_ms`; its idle hours run to the
//! document's `updated_unix_ms` (the agent's last reading), not to the reader's clock.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleAllocation {
    pub kind: String,
    pub id: String,
    pub model: String,
    pub gpu_uuid: String,
    /// The GPU's UUID, or the MIG instance's or vGPU's.
    pub place: String,
    pub idle_since_unix_ms: u64,
    pub idle_hours: f64,
}

/// The allocations of `document` idle for at least `min_hours`, longest idle first.
pub fn idle_now(document: &Value, min_hours: f64) -> Result<Vec<IdleAllocation>, String> {
    if document["format_version"].as_u64() != Some(u64::from(crate::render::JSON_VERSION)) {
        return Err(format!(
            "not an agent state document of format version {} (format_version: {})",
            crate::render::JSON_VERSION,
            document["format_version"]
        ));
    }
    let now = document["updated_unix_ms"]
        .as_u64()
        .ok_or("the document has no updated_unix_ms")?;
    let holders = document["holders"]
        .as_array()
        .ok_or("the document has no holders list")?;
    let text = |holder: &Value, key: &str| holder[key].as_str().unwrap_or_default().to_owned();
    let mut idle: Vec<IdleAllocation> = holders
        .iter()
        .filter(|h| h["holding_now"] == true && h["last_activity"] == "idle")
        .filter_map(|h| {
            let since = h["idle_since_unix_ms"].as_u64()?;
            Some(IdleAllocation {
                kind: text(h, "kind"),
                id: text(h, "id"),
                model: text(h, "model"),
                gpu_uuid: text(h, "gpu_uuid"),
                place: text(h, "place"),
                idle_since_unix_ms: since,
                idle_hours: now.saturating_sub(since) as f64 / 3_600_000.0,
            })
        })
        .filter(|allocation| allocation.idle_hours >= min_hours)
        .collect();
    idle.sort_by(|a, b| {
        b.idle_hours
            .total_cmp(&a.idle_hours)
            .then_with(|| a.place.cmp(&b.place))
    });
    Ok(idle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_holders_idle_now_for_long_enough() {
        let hour = 3_600_000;
        let document = json!({
            "format_version": 1,
            "updated_unix_ms": 10 * hour,
            "holders": [
                {"kind": "slurm_job", "id": "1", "holding_now": true, "last_activity": "idle", "idle_since_unix_ms": 7 * hour, "place": "GPU-a"},
                {"kind": "slurm_job", "id": "2", "holding_now": true, "last_activity": "idle", "idle_since_unix_ms": 9 * hour + hour / 2, "place": "GPU-b"},
                {"kind": "kubernetes_pod", "id": "p", "holding_now": true, "last_activity": "active", "idle_since_unix_ms": null, "place": "GPU-c"},
                {"kind": "slurm_job", "id": "3", "holding_now": false, "last_activity": "idle", "idle_since_unix_ms": hour, "place": "GPU-d"},
            ],
        });
        let idle = idle_now(&document, 1.0).expect("a document");
        assert_eq!(idle.len(), 1);
        assert_eq!((idle[0].id.as_str(), idle[0].idle_hours), ("1", 3.0));
        assert_eq!(idle_now(&document, 0.0).expect("a document").len(), 2);
        assert!(idle_now(&json!({"format_version": 2}), 0.0).is_err());
    }
}
