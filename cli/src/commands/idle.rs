//! `accelfed idle`: the GPU allocations of this node idle right now (the agent's rule), as a
//! table or JSON. What the agent knows is the holder (job, pod, VM, process) and the GPU; the
//! project, VO and user come with the meter's records (issue 32, item 5, is the site-wide report).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use accelfed_agent::idle_list::{IdleAllocation, idle_now};
use serde_json::{Value, json};

use crate::args::agent::{IdleArgs, IdleFormat};
use crate::exit::Outcome;

pub fn run(args: &IdleArgs) -> Outcome {
    if let Some(config) = &args.config {
        return super::idle_site::run(args, config);
    }
    let document = match &args.from {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display())),
        None => fetch(args),
    };
    let parsed = document.and_then(|text| {
        let value: Value =
            serde_json::from_str(&text).map_err(|e| format!("the agent's state document: {e}"))?;
        let idle = idle_now(&value, args.min_hours)?;
        Ok((value, idle))
    });
    let (document, idle) = match parsed {
        Ok(parsed) => parsed,
        Err(error) => {
            tracing::error!("{error}");
            return if args.from.is_some() {
                Outcome::Config
            } else {
                Outcome::Partial
            };
        }
    };
    let text = match args.format {
        IdleFormat::Json => json_text(&document, &idle, args.min_hours),
        IdleFormat::Table => table(&idle),
    };
    match std::io::stdout().write_all(text.as_bytes()) {
        Ok(()) => Outcome::Ok,
        Err(error) => {
            tracing::error!("standard output: {error}");
            Outcome::Partial
        }
    }
}

/// GET /v1/state from the agent on this node.
fn fetch(args: &IdleArgs) -> Result<String, String> {
    let address = args.agent;
    if !address.ip().is_loopback() {
        return Err(format!(
            "--agent {address}: the agent serves plain HTTP on this node only; give a loopback address"
        ));
    }
    let fail =
        |e: std::io::Error| format!("the agent at {address}: {e} (is accelfed agent running?)");
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5)).map_err(fail)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(fail)?;
    write!(
        stream,
        "GET /v1/state HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .map_err(fail)?;
    let mut response = String::new();
    stream
        .take(64 << 20)
        .read_to_string(&mut response)
        .map_err(fail)?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("the agent at {address}: not an HTTP response"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!(
            "the agent at {address}: {}",
            head.lines().next().unwrap_or_default()
        ));
    }
    Ok(body.to_owned())
}

fn json_text(document: &Value, idle: &[IdleAllocation], min_hours: f64) -> String {
    let lost: f64 = idle.iter().map(|a| a.idle_hours).sum();
    let value = json!({
        "updated_unix_ms": document["updated_unix_ms"],
        "idle_rule": document["idle_rule"],
        "min_hours": min_hours,
        "allocations": idle,
        "gpu_hours_lost": lost,
    });
    format!("{value}\n")
}

/// An idle-since instant (milliseconds since the epoch, as the agent keeps it) as the tables show
/// it, in UTC; `?` where it is out of range.
pub(super) fn idle_since_utc(unix_ms: u64) -> String {
    i64::try_from(unix_ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "?".to_owned(),
            |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
        )
}

fn table(idle: &[IdleAllocation]) -> String {
    let mut out = format!(
        "{:<15} {:<38} {:<24} {:<42} {:<20} {:>10}\n",
        "KIND", "ID", "MODEL", "GPU OR INSTANCE", "IDLE SINCE (UTC)", "IDLE HOURS"
    );
    for a in idle {
        let since = idle_since_utc(a.idle_since_unix_ms);
        out.push_str(&format!(
            "{:<15} {:<38} {:<24} {:<42} {:<20} {:>10.2}\n",
            a.kind, a.id, a.model, a.place, since, a.idle_hours
        ));
    }
    let lost: f64 = idle.iter().map(|a| a.idle_hours).sum();
    out.push_str(&format!(
        "{} allocation(s) idle; {lost:.2} GPU-hours (or MIG/vGPU instance-hours) lost so far\n",
        idle.len()
    ));
    out
}
