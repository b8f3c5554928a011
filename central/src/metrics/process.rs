//! The process's own gauges, in the names Prometheus client libraries use (`process_*`), read from
//! `/proc/self` at each scrape: resident and virtual memory, CPU time, open and allowed file
//! descriptors, start time. On a system without `/proc` the lines are left out.

use std::fmt::Write as _;

/// Clock ticks per second of `/proc/<pid>/stat`'s times: the kernel reports them in USER_HZ,
/// which is 100 on every architecture Linux runs accelfed on (it is fixed by the kernel's ABI,
/// unlike the internal HZ).
const TICKS_PER_SECOND: f64 = 100.0;

/// Appends the process gauges to `out`.
pub fn render(out: &mut String) {
    let stat = std::fs::read_to_string("/proc/self/stat").ok();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .as_deref()
        .and_then(|stat| stat.rsplit_once(')'))
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // proc(5) numbers fields from 1 (pid), 2 (comm); `fields[0]` is field 3 (state).
    let field = |number: usize| -> Option<f64> { fields.get(number - 3)?.parse().ok() };
    if let (Some(user), Some(system)) = (field(14), field(15)) {
        let _ = writeln!(
            out,
            "# HELP process_cpu_seconds_total User and system CPU time spent, in seconds.\n\
             # TYPE process_cpu_seconds_total counter\n\
             process_cpu_seconds_total {}",
            (user + system) / TICKS_PER_SECOND
        );
    }
    if let Some(bytes) = field(23) {
        let _ = writeln!(
            out,
            "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n\
             # TYPE process_virtual_memory_bytes gauge\n\
             process_virtual_memory_bytes {bytes}"
        );
    }
    if let Some(kib) = status_kib("VmRSS:") {
        let _ = writeln!(
            out,
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n\
             # TYPE process_resident_memory_bytes gauge\n\
             process_resident_memory_bytes {}",
            kib * 1024
        );
    }
    if let (Some(ticks), Some(boot)) = (field(22), boot_time()) {
        let _ = writeln!(
            out,
            "# HELP process_start_time_seconds Start time of the process since the Unix epoch, in seconds.\n\
             # TYPE process_start_time_seconds gauge\n\
             process_start_time_seconds {}",
            boot + ticks / TICKS_PER_SECOND
        );
    }
    if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
        let _ = writeln!(
            out,
            "# HELP process_open_fds Number of open file descriptors.\n\
             # TYPE process_open_fds gauge\n\
             process_open_fds {}",
            entries.count()
        );
    }
    if let Some(limit) = max_fds() {
        let _ = writeln!(
            out,
            "# HELP process_max_fds Maximum number of open file descriptors.\n\
             # TYPE process_max_fds gauge\n\
             process_max_fds {limit}"
        );
    }
}

/// A `/proc/self/status` line's figure in kB.
fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// When the system booted (`btime` of `/proc/stat`), in Unix seconds.
fn boot_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|line| line.starts_with("btime "))?;
    line["btime ".len()..].trim().parse().ok()
}

/// The soft limit on open files (`/proc/self/limits`).
fn max_fds() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_process_gauges_are_read_from_proc() {
        let mut out = String::new();
        super::render(&mut out);
        let value = |name: &str| -> f64 {
            out.lines()
                .find_map(|line| line.strip_prefix(&format!("{name} ")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in\n{out}"))
        };
        assert!(value("process_resident_memory_bytes") > 1_000_000.0);
        assert!(value("process_open_fds") >= 3.0);
        assert!(value("process_max_fds") >= value("process_open_fds"));
        let now = chrono::Utc::now().timestamp() as f64;
        let started = value("process_start_time_seconds");
        assert!(
            started <= now + 1.0 && started > now - 3600.0,
            "{started} vs {now}"
        );
        assert!(value("process_cpu_seconds_total") >= 0.0);
    }
}
