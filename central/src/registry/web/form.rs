//! The filter form: GET parameters as the browser sends them, read into the registry's
//! [`Filter`]. Everything arrives as text, so a bad number is a message on the page (with the
//! form still filled in) rather than a bare 400.

use serde::Deserialize;

use accelfed_schemas::gpu::GpuCount;

use accelfed_schemas::offer::{Filter, Sharing};

/// The form's fields, as typed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FormParams {
    pub vendor: Option<String>,
    pub model: Option<String>,
    pub min_gpus: Option<String>,
    pub min_slices: Option<String>,
    pub mig_profile: Option<String>,
    pub min_memory_mb: Option<String>,
    pub compute_capability: Option<String>,
    pub sharing: Option<String>,
    pub vo: Option<String>,
    pub site: Option<String>,
    pub min_free: Option<String>,
    pub fresh: Option<String>,
}

/// A field's text, `None` when absent or blank.
fn given(field: &Option<String>) -> Option<String> {
    field
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// A number already checked finite and not negative, as a GPU count.
fn count(value: f64) -> Option<GpuCount> {
    GpuCount::new(value).ok()
}

impl FormParams {
    /// The filter, and one sentence per field that did not read (that field is then ignored).
    pub fn filter(&self) -> (Filter, Vec<String>) {
        let mut problems = Vec::new();
        let mut number = |name: &str, field: &Option<String>| -> Option<f64> {
            let text = given(field)?;
            match text.parse::<f64>() {
                Ok(value) if value.is_finite() && value >= 0.0 => Some(value),
                _ => {
                    problems.push(format!("{name}: {text:?} is not a number of 0 or more"));
                    None
                }
            }
        };
        let min_gpus = number("minimum GPUs", &self.min_gpus).and_then(count);
        let min_slices = number("minimum slices", &self.min_slices).and_then(count);
        let min_free = number("minimum free GPUs", &self.min_free).and_then(count);
        let min_memory_mb =
            number("minimum GPU memory (MB)", &self.min_memory_mb).map(|value| value.ceil() as u64);
        let sharing = given(&self.sharing).and_then(|text| match text.parse::<Sharing>() {
            Ok(sharing) => Some(sharing),
            Err(reason) => {
                problems.push(format!("sharing: {reason}"));
                None
            }
        });
        let filter = Filter {
            vendor: given(&self.vendor),
            model: given(&self.model),
            min_gpus,
            min_slices,
            mig_profile: given(&self.mig_profile),
            min_memory_mb,
            compute_capability: given(&self.compute_capability),
            sharing,
            vo: given(&self.vo),
            site: given(&self.site),
            min_free,
            fresh: given(&self.fresh)
                .is_some_and(|text| matches!(text.as_str(), "on" | "true" | "1" | "yes")),
        };
        (filter, problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_fields_are_absent_and_numbers_read() {
        let params = FormParams {
            model: Some("A100".into()),
            vendor: Some("  ".into()),
            min_gpus: Some("4".into()),
            min_memory_mb: Some("40000.5".into()),
            fresh: Some("on".into()),
            ..FormParams::default()
        };
        let (filter, problems) = params.filter();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(filter.model.as_deref(), Some("A100"));
        assert_eq!(filter.vendor, None);
        assert_eq!(filter.min_gpus, Some(GpuCount::whole(4)));
        assert_eq!(filter.min_memory_mb, Some(40_001));
        assert!(filter.fresh);
    }

    #[test]
    fn bad_values_are_named_and_ignored() {
        let params = FormParams {
            min_gpus: Some("four".into()),
            min_free: Some("-1".into()),
            sharing: Some("<b>".into()),
            ..FormParams::default()
        };
        let (filter, problems) = params.filter();
        assert_eq!(filter, Filter::default());
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("minimum GPUs"));
    }
}
