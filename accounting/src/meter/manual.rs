//! Manual usage: a JSON-lines file of observations for GPUs no meter can read (a bare-metal node
//! handed to one VO, a workstation lent for a project). One object per line; blank lines and lines
//! starting with `#` are skipped. The site comes from the configuration, the source is `static`.
//!
//! ```json
//! {"resource": "gpu-node-07", "model": "A100-SXM4-80GB", "count": 4, "vo": "atlas",
//!  "start": "2026-01-01T00:00:00Z", "end": "2026-02-01T00:00:00Z"}
//! ```
//!
//! Fields: `resource` (required, stable: it is the record's AssociatedRecord), `model` (required),
//! `count` (required, > 0, fractional allowed), `start` (required, RFC 3339), `end` (RFC 3339;
//! left out: still in use, metered up to now), `vo`, `fqan`, `user`, `cores`, `utilisation`
//! (0..=1), `energy_wh` (watt-hours over the whole interval, shared out across months by seconds), `type` (`GPU` default, `FPGA`, `MIC`, `Other`), `record_type` (`cloud` default, `job`).
//! Unknown fields are refused. A bad line (one that is not UTF-8 included) is refused alone, named
//! by file, line, column and field; the other lines are metered.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use accelfed_schemas::excerpt::shorten_quotes;
use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{Fqan, LocalId, SiteName, Text, VoName};
use accelfed_schemas::usage::{Month, Observation, RecordType, Source};

/// A manual-usage file that cannot be read (nothing of it is metered), or one line of it that
/// cannot be used (that line alone is not metered).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}{}: {message}",
    if *line > 0 { format!(":{line}") } else { String::new() },
    if *column > 0 { format!(":{column}") } else { String::new() })]
pub struct ManualError {
    pub path: String,
    /// 1-based; 0 when the file could not be read.
    pub line: usize,
    /// 1-based; 0 when the problem is the line as a whole.
    pub column: usize,
    pub message: String,
}

/// What a manual-usage file gave: the observations of its good lines, and its refused lines.
#[derive(Debug, Default)]
pub struct ManualUsage {
    pub observations: Vec<Observation>,
    pub refused: Vec<ManualError>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    resource: LocalId,
    model: GpuModel,
    count: f64,
    start: DateTime<Utc>,
    #[serde(default)]
    end: Option<DateTime<Utc>>,
    #[serde(default)]
    vo: Option<VoName>,
    #[serde(default)]
    fqan: Option<Fqan>,
    #[serde(default)]
    user: Option<Text>,
    #[serde(default)]
    cores: Option<u32>,
    #[serde(default)]
    utilisation: Option<f64>,
    #[serde(default)]
    energy_wh: Option<f64>,
    #[serde(default, rename = "type")]
    accelerator_type: AcceleratorType,
    #[serde(default = "cloud")]
    record_type: RecordType,
}

fn cloud() -> RecordType {
    RecordType::Cloud
}

/// The largest manual-usage file read (64 MiB, some hundred thousand lines).
pub const MAX_MANUAL_BYTES: u64 = 64 << 20;

/// Reads a manual-usage file of at most [`MAX_MANUAL_BYTES`]; an unreadable file is an error,
/// a bad line is refused alone.
pub fn read_manual(path: &Path, site: &SiteName) -> Result<ManualUsage, ManualError> {
    let error = |message: String| ManualError {
        path: path.display().to_string(),
        line: 0,
        column: 0,
        message,
    };
    let file = std::fs::File::open(path).map_err(|err| error(format!("cannot read: {err}")))?;
    // Bytes, not a String: one line that is not UTF-8 (a name pasted from a Latin-1 editor) is
    // refused alone at its line number instead of failing the whole file.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_MANUAL_BYTES + 1),
        &mut bytes,
    )
    .map_err(|err| error(format!("cannot read: {err}")))?;
    if bytes.len() as u64 > MAX_MANUAL_BYTES {
        return Err(error(format!("larger than {MAX_MANUAL_BYTES} bytes")));
    }
    Ok(parse_manual_bytes(
        &path.display().to_string(),
        &bytes,
        site,
    ))
}

/// Parses manual-usage text; `path` is only used in messages.
pub fn parse_manual(path: &str, text: &str, site: &SiteName) -> ManualUsage {
    parse_manual_bytes(path, text.as_bytes(), site)
}

/// Parses manual-usage bytes line by line; a line that is not UTF-8 is refused alone, at the
/// column (1-based, in bytes) of its first invalid byte. `path` is only used in messages.
pub fn parse_manual_bytes(path: &str, bytes: &[u8], site: &SiteName) -> ManualUsage {
    let mut usage = ManualUsage::default();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = match std::str::from_utf8(raw) {
            Ok(raw) => raw,
            Err(err) => {
                usage.refused.push(ManualError {
                    path: path.to_owned(),
                    line: index + 1,
                    column: err.valid_up_to() + 1,
                    message: "not UTF-8 text".to_owned(),
                });
                continue;
            }
        };
        let trimmed = raw.trim_end();
        if trimmed.trim_start().is_empty() || trimmed.trim_start().starts_with('#') {
            continue;
        }
        match parse_line(trimmed, site) {
            Ok(observation) => usage.observations.push(observation),
            Err((column, message)) => usage.refused.push(ManualError {
                path: path.to_owned(),
                line: index + 1,
                column,
                message,
            }),
        }
    }
    usage
}

/// One line's observation, or the column (0: the line as a whole) and what is wrong.
fn parse_line(text: &str, site: &SiteName) -> Result<Observation, (usize, String)> {
    let line: Line = serde_json::from_str(text).map_err(|err| {
        // serde_json counts within the line it was given, which is the file's line; its message
        // ends with that position, given here as the column instead.
        let message = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let message = shorten_quotes(message.strip_suffix(&suffix).unwrap_or(&message));
        (err.column(), message)
    })?;
    let fail = |field: &str, message: String| (value_column(text, field), message);
    let count = GpuCount::new(line.count)
        .ok()
        .filter(|c| c.get() > 0.0)
        .ok_or_else(|| {
            fail(
                "count",
                format!("count must be a number above zero, got {}", line.count),
            )
        })?;
    let epoch = Month::new(Month::MIN_YEAR, 1).map(Month::start).ok();
    if epoch.is_some_and(|epoch| line.start < epoch) {
        return Err(fail(
            "start",
            format!(
                "start {} of {} is before the federation's epoch, {}-01",
                line.start,
                line.resource,
                Month::MIN_YEAR
            ),
        ));
    }
    if let Some(end) = line.end
        && end < line.start
    {
        return Err(fail(
            "end",
            format!(
                "end {end} is before start {} of {}",
                line.start, line.resource
            ),
        ));
    }
    if let Some(value) = line.utilisation
        && !(0.0..=1.0).contains(&value)
    {
        return Err(fail(
            "utilisation",
            format!("utilisation must be within 0..=1, got {value}"),
        ));
    }
    if let Some(value) = line.energy_wh
        && !(value.is_finite() && value >= 0.0)
    {
        return Err(fail(
            "energy_wh",
            format!("energy_wh must be a non-negative number of watt-hours, got {value}"),
        ));
    }
    Ok(Observation {
        site: site.clone(),
        record_type: line.record_type,
        resource: line.resource,
        // Manual input is one more source of model names (`H100`, `A100-SXM4-80GB`).
        model: GpuModel::canonical(line.model.as_str()).unwrap_or(line.model),
        accelerator_type: line.accelerator_type,
        count,
        // A manual count is physical GPUs as written; a fraction of one is recorded as such.
        sharing: if count.is_whole() {
            Sharing::Whole
        } else {
            Sharing::Fraction
        },
        fqan: line.fqan,
        vo: line.vo,
        user: line.user,
        source: Source::Static,
        cores: line.cores,
        benchmark: None,
        utilisation: line.utilisation,
        energy_wh: line.energy_wh,
        agent_id: None,
        start: line.start,
        end: line.end,
    })
}

/// The 1-based column (in bytes, as serde_json counts the columns of its own errors) where the
/// value of top-level `field` starts in the line `text`, for problems found after the line parsed;
/// 0 when it cannot be told. The line is read again with each value kept as its raw text, whose
/// place in `text` is the value's position: serde_json's own positions, not a second scanner.
fn value_column(text: &str, field: &str) -> usize {
    let Ok(values) = serde_json::from_str::<
        std::collections::BTreeMap<String, &serde_json::value::RawValue>,
    >(text) else {
        return 0;
    };
    values.get(field).map_or(0, |raw| {
        (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize) + 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> SiteName {
        SiteName::new("TEST-SITE").unwrap()
    }

    #[test]
    fn reads_lines_skipping_comments_and_blanks() {
        let text = "# bare-metal nodes\n\n\
            {\"resource\": \"node-1\", \"model\": \"A100\", \"count\": 4, \"vo\": \"atlas\", \
             \"start\": \"2026-01-01T00:00:00Z\", \"end\": \"2026-01-02T00:00:00Z\"}\n\
            {\"resource\": \"node-2\", \"model\": \"H100\", \"count\": 0.5, \
             \"start\": \"2026-01-01T00:00:00Z\", \"record_type\": \"job\", \"type\": \"GPU\"}\n";
        let usage = parse_manual("usage.jsonl", text, &site());
        assert!(usage.refused.is_empty(), "{:?}", usage.refused);
        let found = usage.observations;
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].resource.as_str(), "node-1");
        assert_eq!(found[0].count.get(), 4.0);
        assert_eq!(found[0].vo.as_ref().unwrap().as_str(), "atlas");
        assert_eq!(found[0].source, Source::Static);
        assert_eq!(found[1].end, None);
        assert_eq!(found[1].record_type, RecordType::Job);
    }

    #[test]
    fn a_missing_or_endless_file_is_named_without_a_line() {
        let site = SiteName::new("SITE-A").unwrap();
        let missing = read_manual(Path::new("/nonexistent/usage.jsonl"), &site)
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("/nonexistent/usage.jsonl: cannot read"),
            "{missing}"
        );
        let endless = read_manual(Path::new("/dev/zero"), &site)
            .unwrap_err()
            .to_string();
        assert!(endless.starts_with("/dev/zero: larger than"), "{endless}");
    }

    #[test]
    fn a_bad_line_is_refused_alone_named_by_line_column_and_field() {
        let good = "{\"resource\": \"ok\", \"model\": \"A\", \"count\": 1, \"start\": \"2026-01-01T00:00:00Z\"}";
        let bad = [
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": 1}",
                "usage.jsonl:2:43: missing field `start`",
            ),
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": -1, \"start\": \"2026-01-01T00:00:00Z\"}",
                "usage.jsonl:2:42: count must be a number above zero, got -1",
            ),
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": 1, \"utilisation\": 1.5, \"start\": \"2026-01-01T00:00:00Z\"}",
                "usage.jsonl:2:60: utilisation must be within 0..=1, got 1.5",
            ),
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": 1, \"energy_wh\": -3, \"start\": \"2026-01-01T00:00:00Z\"}",
                "usage.jsonl:2:58: energy_wh must be a non-negative number of watt-hours, got -3",
            ),
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": 1, \"start\": \"2026-01-01T00:00:00Z\", \"colour\": 1}",
                "usage.jsonl:2:85: unknown field `colour`",
            ),
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": 1, \"start\": \"1970-01-01T00:00:00Z\"}",
                "usage.jsonl:2:54: start 1970-01-01 00:00:00 UTC of n is before the federation's epoch, 2000-01",
            ),
            (
                "{\"resource\": \"n\", \"model\": \"A\", \"count\": 1, \"start\": \"2026-01-02T00:00:00Z\", \"end\": \"2026-01-01T00:00:00Z\"}",
                "usage.jsonl:2:85: end 2026-01-01 00:00:00 UTC is before start",
            ),
        ];
        let huge = "{\"resource\": \"n\", \"model\": \"A\", \"count\": \"".to_owned()
            + &"9".repeat(1_000_000)
            + "\", \"start\": \"2026-01-01T00:00:00Z\"}";
        let huge_expected = format!(
            "usage.jsonl:2:1000043: invalid type: string \"{}...\", expected f64",
            "9".repeat(40)
        );
        let bad = bad
            .into_iter()
            .map(|(line, expected)| (line.to_owned(), expected.to_owned()))
            .chain([(huge, huge_expected)]);
        for (line, expected) in bad {
            let usage = parse_manual(
                "usage.jsonl",
                &format!("# header\n{line}\n{good}\n"),
                &site(),
            );
            assert_eq!(usage.refused.len(), 1, "{line}");
            let err = usage.refused[0].to_string();
            assert!(err.starts_with(&expected), "{expected}: {err}");
            assert!(err.len() < 200, "a short message: {err}");
            assert_eq!(usage.observations.len(), 1, "{line}");
            assert_eq!(usage.observations[0].resource.as_str(), "ok");
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused_alone_and_the_others_are_metered() {
        let good = "{\"resource\": \"ok\", \"model\": \"A\", \"count\": 1, \"start\": \"2026-01-01T00:00:00Z\"}";
        // Latin-1 "é" (0xE9) in a resource name: byte 18 of line 2 (`{"resource": "caf` is 17).
        let mut bytes = format!("{good}\n").into_bytes();
        bytes.extend_from_slice(b"{\"resource\": \"caf\xe9\", \"model\": \"A\"}\r\n");
        bytes.extend_from_slice(format!("{good}\n").as_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let usage = read_manual(&path, &site()).unwrap();
        assert_eq!(usage.observations.len(), 2);
        assert_eq!(usage.refused.len(), 1);
        let refused = &usage.refused[0];
        assert_eq!((refused.line, refused.column), (2, 18));
        assert_eq!(
            refused.to_string(),
            format!("{}:2:18: not UTF-8 text", path.display())
        );
    }
}
