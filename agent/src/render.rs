//! What the endpoint serves: JSON for the meter (and `accelfed idle`), Prometheus text for
//! dashboards. Both are made once per period, so a request costs a copy.
//!
//! JSON (`/v1/state`, format version 1): `gpus` (identity, the last reading, the totals since the
//! state began) and `holders`, one object per holder and place (a GPU, or one of its MIG or vGPU
//! instances) with `held_seconds`, `active_seconds`, `idle_seconds`, `unknown_seconds`
//! (held + nothing told the activity), `energy_joules` (the GPU's energy shared by held time),
//! `holding_now`, and `idle_since_unix_ms` (start of the current run of idle windows), and `months`: the same
//! counters per calendar month (UTC), `{"2026-01": {"held_seconds": ..., ...}}`, which the meter
//! turns into each month's ActiveDuration and energy. Seconds and
//! joules only grow (counters): a meter takes differences between two reads.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::idle::IdleRule;
use crate::ledger::Ledger;
use crate::reading::GpuReading;

/// A Prometheus family of the GPUs: name, help, the value of a reading.
type GpuGauge = (&'static str, &'static str, fn(&GpuReading) -> Option<f64>);
/// A Prometheus family of the holders: name, help, the value of an entry.
type HolderCounter = (&'static str, &'static str, fn(&crate::ledger::Entry) -> f64);

/// The JSON document's format version.
pub const JSON_VERSION: u32 = 1;

pub fn json(
    ledger: &Ledger,
    readings: &[GpuReading],
    now_ms: u64,
    period_seconds: f64,
    rule: &IdleRule,
) -> Value {
    let gpus: Vec<Value> = readings
        .iter()
        .map(|reading| {
            let totals = ledger.gpus.get(&reading.identity.uuid);
            json!({
                "uuid": reading.identity.uuid,
                "index": reading.identity.index,
                "name": reading.identity.name,
                "model": reading.identity.model,
                "memory_total_bytes": reading.identity.memory_total_bytes,
                "mig_mode": reading.identity.mig_mode,
                "mig_instances": reading.identity.mig_instances,
                "vgpu_instances": reading.identity.vgpu_instances.iter().map(|v| json!({
                    "uuid": v.uuid, "vm_kind": v.vm.kind(), "vm_id": v.vm.id(),
                })).collect::<Vec<_>>(),
                "utilisation_percent": reading.utilisation_percent,
                "memory_used_bytes": reading.memory_used_bytes,
                "power_watts": reading.power_mw.map(|mw| f64::from(mw) / 1000.0),
                "energy_counter_joules": reading.energy_mj.map(|mj| mj as f64 / 1000.0),
                "observed_seconds": totals.map_or(0.0, |t| t.observed_seconds),
                "energy_joules": totals.map_or(0.0, |t| t.energy_joules),
                "unheld_seconds": totals.map_or(0.0, |t| t.unheld_seconds),
                "unattributed_energy_joules": totals.map_or(0.0, |t| t.unattributed_energy_joules),
                "gap_seconds": totals.map_or(0.0, |t| t.gap_seconds),
            })
        })
        .collect();
    let holders: Vec<Value> = ledger
        .entries
        .values()
        .map(|entry| {
            json!({
                "kind": entry.holder.kind(),
                "id": entry.holder.id(),
                "gpu_uuid": entry.gpu_uuid,
                "place": entry.place,
                "model": entry.model,
                "holding_now": ledger.holding_now(entry),
                "last_activity": entry.last_activity,
                "held_seconds": entry.held_seconds,
                "active_seconds": entry.active_seconds,
                "idle_seconds": entry.idle_seconds,
                "unknown_seconds": entry.unknown_seconds,
                "energy_joules": entry.energy_joules,
                "first_seen_unix_ms": entry.first_seen_ms,
                "last_seen_unix_ms": entry.last_seen_ms,
                "idle_since_unix_ms": entry.idle_since_ms,
                "months": entry.months,
            })
        })
        .collect();
    json!({
        "format_version": JSON_VERSION,
        "updated_unix_ms": now_ms,
        "period_seconds": period_seconds,
        "idle_rule": rule,
        "gpus": gpus,
        "holders": holders,
    })
}

pub fn prometheus(ledger: &Ledger, readings: &[GpuReading]) -> String {
    let mut out = String::with_capacity(4096);
    let mut family =
        |name: &str, kind: &str, help: &str, rows: &mut dyn Iterator<Item = (String, f64)>| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in rows {
                let _ = writeln!(out, "{name}{{{labels}}} {value}");
            }
        };
    let gpu_labels = |r: &GpuReading| {
        format!(
            "uuid=\"{}\",model=\"{}\"",
            escape(&r.identity.uuid),
            escape(&r.identity.model)
        )
    };
    let gauges: [GpuGauge; 4] = [
        (
            "accelfed_agent_gpu_utilisation_percent",
            "GPU utilisation NVML gave at the last reading.",
            |r| r.utilisation_percent.map(f64::from),
        ),
        (
            "accelfed_agent_gpu_memory_used_bytes",
            "GPU memory in use.",
            |r| r.memory_used_bytes.map(|b| b as f64),
        ),
        ("accelfed_agent_gpu_power_watts", "GPU power draw.", |r| {
            r.power_mw.map(|mw| f64::from(mw) / 1000.0)
        }),
        (
            "accelfed_agent_gpu_energy_counter_joules",
            "The GPU's energy counter since the driver loaded.",
            |r| r.energy_mj.map(|mj| mj as f64 / 1000.0),
        ),
    ];
    for (name, help, value) in gauges {
        family(
            name,
            "gauge",
            help,
            &mut readings
                .iter()
                .filter_map(|r| value(r).map(|v| (gpu_labels(r), v))),
        );
    }
    let entries: Vec<(String, &crate::ledger::Entry)> = ledger
        .entries
        .values()
        .map(|e| {
            let labels = format!(
                "kind=\"{}\",id=\"{}\",gpu_uuid=\"{}\",place=\"{}\",model=\"{}\"",
                e.holder.kind(),
                escape(&e.holder.id()),
                escape(&e.gpu_uuid),
                escape(&e.place),
                escape(&e.model)
            );
            (labels, e)
        })
        .collect();
    let counters: [HolderCounter; 5] = [
        (
            "accelfed_agent_holder_held_seconds_total",
            "Seconds the holder held the GPU or instance.",
            |e| e.held_seconds,
        ),
        (
            "accelfed_agent_holder_active_seconds_total",
            "Held seconds in windows at or above the idle threshold.",
            |e| e.active_seconds,
        ),
        (
            "accelfed_agent_holder_idle_seconds_total",
            "Held seconds in windows below the idle threshold.",
            |e| e.idle_seconds,
        ),
        (
            "accelfed_agent_holder_unknown_seconds_total",
            "Held seconds no source told the activity of.",
            |e| e.unknown_seconds,
        ),
        (
            "accelfed_agent_holder_energy_joules_total",
            "The GPU's energy shared out by held time.",
            |e| e.energy_joules,
        ),
    ];
    for (name, help, value) in counters {
        family(
            name,
            "counter",
            help,
            &mut entries.iter().map(|(labels, e)| (labels.clone(), value(e))),
        );
    }
    family(
        "accelfed_agent_holder_idle",
        "gauge",
        "1 while the holder holds the GPU and its last window was idle.",
        &mut entries
            .iter()
            .filter(|(_, e)| ledger.holding_now(e))
            .map(|(labels, e)| {
                (
                    labels.clone(),
                    if e.last_activity == crate::idle::Activity::Idle {
                        1.0
                    } else {
                        0.0
                    },
                )
            }),
    );
    out
}

/// A Prometheus label value: backslash, double quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
