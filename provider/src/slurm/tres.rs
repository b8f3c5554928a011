//! GPUs in TRES, as `sacct` prints them: the string `billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,node=1`
//! (`-P -o AllocTRES`) or the JSON list `[{"type": "gres", "name": "gpu", "count": 2},
//! {"type": "gres", "name": "gpu:a100", "count": 2}, ...]`.
//!
//! Slurm lists the same GPUs twice, once untyped (`gres/gpu`, the count) and once per type
//! (`gres/gpu:a100`, the model): the count comes from `gres/gpu` and is never added to the typed
//! entries. Only when `gres/gpu` is missing (a site that tracks only typed TRES) is the typed sum used.

/// The GPUs of one allocation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GpuTres {
    /// How many GPUs; `None` when the TRES names none (a CPU job).
    pub count: Option<u64>,
    /// The GPU type when exactly one type is listed.
    pub gpu_type: Option<String>,
    /// `gres/gpuutil` where Slurm records it (23.02+ with NVML): GPU utilisation in percent,
    /// summed over the allocation's GPUs.
    pub gpuutil: Option<u64>,
}

/// Why a TRES could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read TRES {text:?}: {reason}")]
pub struct TresError {
    pub text: String,
    pub reason: String,
}

/// Collects TRES entries one at a time (from a string or a JSON list) into [`GpuTres`].
#[derive(Debug, Default)]
pub struct GpuTresBuilder {
    untyped: Option<u64>,
    typed: Vec<(String, u64)>,
    gpuutil: Option<u64>,
}

impl GpuTresBuilder {
    /// One entry: `kind` `gres`, `name` `gpu:a100`. Entries of other kinds are ignored.
    pub fn add(&mut self, kind: &str, name: &str, count: u64) {
        if kind != "gres" {
            return;
        }
        match name.split_once(':') {
            None if name == "gpu" => self.untyped = Some(self.untyped.unwrap_or(0) + count),
            None if name == "gpuutil" => self.gpuutil = Some(count),
            Some(("gpu", gpu_type)) => match self.typed.iter_mut().find(|(t, _)| t == gpu_type) {
                Some((_, sum)) => *sum += count,
                None => self.typed.push((gpu_type.to_owned(), count)),
            },
            _ => {}
        }
    }

    pub fn finish(self) -> GpuTres {
        let typed_sum = (!self.typed.is_empty()).then(|| self.typed.iter().map(|(_, c)| c).sum());
        let gpu_type = match self.typed.as_slice() {
            [(only, _)] => Some(only.clone()),
            _ => None,
        };
        GpuTres {
            count: self.untyped.or(typed_sum),
            gpu_type,
            gpuutil: self.gpuutil,
        }
    }
}

/// Reads a TRES string (`cpu=1,gres/gpu:a100=2,gres/gpu=2`).
pub fn parse_tres_string(text: &str) -> Result<GpuTres, TresError> {
    let mut builder = GpuTresBuilder::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item.split_once('=').ok_or_else(|| TresError {
            text: text.to_owned(),
            reason: format!("{item:?} is not key=value"),
        })?;
        let Some(name) = key.strip_prefix("gres/") else {
            continue;
        };
        // `gres/gpumem=1024M` and other GPU metrics carry units; only counts matter here.
        if !(name == "gpu" || name == "gpuutil" || name.starts_with("gpu:")) {
            continue;
        }
        let count = value.parse::<u64>().map_err(|_| TresError {
            text: text.to_owned(),
            reason: format!("{value:?} is not a count for {key}"),
        })?;
        builder.add("gres", name, count);
    }
    Ok(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_from_gres_gpu_model_from_typed_entry_never_both() {
        let tres = parse_tres_string("billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,node=1").unwrap();
        assert_eq!(
            tres,
            GpuTres {
                count: Some(2),
                gpu_type: Some("a100".into()),
                gpuutil: None
            }
        );
    }

    #[test]
    fn typed_only_sums_and_untyped_only_has_no_model() {
        let typed = parse_tres_string("gres/gpu:a100=1,gres/gpu:v100=2").unwrap();
        assert_eq!((typed.count, typed.gpu_type), (Some(3), None));
        let untyped = parse_tres_string("cpu=4,gres/gpu=1,mem=4G").unwrap();
        assert_eq!((untyped.count, untyped.gpu_type), (Some(1), None));
        let cpu = parse_tres_string("cpu=4,mem=4000M,node=1").unwrap();
        assert_eq!(cpu.count, None);
        assert_eq!(parse_tres_string("").unwrap(), GpuTres::default());
    }

    #[test]
    fn gpuutil_is_kept_apart() {
        let tres = parse_tres_string("cpu=00:00:10,gres/gpumem=1024M,gres/gpuutil=150").unwrap();
        assert_eq!(tres.gpuutil, Some(150));
        assert_eq!(tres.count, None);
    }

    #[test]
    fn unreadable_counts_are_errors() {
        assert!(parse_tres_string("gres/gpu=two").is_err());
        assert!(parse_tres_string("gres/gpu").is_err());
    }
}
