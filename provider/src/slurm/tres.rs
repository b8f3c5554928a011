//! GPUs in TRES, as `sacct` prints them: the string `billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,node=1`
//! (`-P -o AllocTRES`) or the JSON list `[{"type": "gres", "name": "gpu", "count": 2},
//! {"type": "gres", "name": "gpu:a100", "count": 2}, ...]`.
//!
//! Slurm lists the same GPUs twice, once untyped (`gres/gpu`, the count) and once per type
//! (`gres/gpu:a100`, the model): the count comes from `gres/gpu` and is never added to the typed
//! entries. Only when `gres/gpu` is missing (a site that tracks only typed TRES) is the typed sum used.
//! GPU shards (`gres/shard`, Slurm's MPS-style sharing, `shard:<type>` typed) are counted apart,
//! by the same rule.

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
    /// How many GPU shards (`gres/shard`); `None` when the TRES names none.
    pub shards: Option<u64>,
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
    shards: Option<u64>,
    typed_shards: Vec<(String, u64)>,
}

impl GpuTresBuilder {
    /// One entry: `kind` `gres`, `name` `gpu:a100`. Entries of other kinds are ignored.
    pub fn add(&mut self, kind: &str, name: &str, count: u64) {
        if kind != "gres" {
            return;
        }
        match name.split_once(':') {
            None if name == "gpu" => {
                self.untyped = Some(self.untyped.unwrap_or(0).saturating_add(count));
            }
            None if name == "gpuutil" => self.gpuutil = Some(count),
            None if name == "shard" => {
                self.shards = Some(self.shards.unwrap_or(0).saturating_add(count));
            }
            Some(("shard", gpu_type)) => add_typed(&mut self.typed_shards, gpu_type, count),
            Some(("gpu", gpu_type)) => add_typed(&mut self.typed, gpu_type, count),
            _ => {}
        }
    }

    pub fn finish(self) -> GpuTres {
        // A shard job's GPU type comes from its typed shards (`gres/shard:a100`).
        let types = if self.typed.is_empty() {
            &self.typed_shards
        } else {
            &self.typed
        };
        let gpu_type = match types.as_slice() {
            [(only, _)] => Some(only.clone()),
            _ => None,
        };
        GpuTres {
            count: self.untyped.or(typed_sum(&self.typed)),
            gpu_type,
            gpuutil: self.gpuutil,
            shards: self.shards.or(typed_sum(&self.typed_shards)),
        }
    }
}

fn add_typed(typed: &mut Vec<(String, u64)>, gpu_type: &str, count: u64) {
    match typed.iter_mut().find(|(t, _)| t == gpu_type) {
        Some((_, sum)) => *sum = sum.saturating_add(count),
        None => typed.push((gpu_type.to_owned(), count)),
    }
}

fn typed_sum(typed: &[(String, u64)]) -> Option<u64> {
    (!typed.is_empty()).then(|| {
        typed
            .iter()
            .fold(0, |sum: u64, (_, c)| sum.saturating_add(*c))
    })
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
        let shard = name == "shard" || name.starts_with("shard:");
        if !(name == "gpu" || name == "gpuutil" || name.starts_with("gpu:") || shard) {
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
                gpuutil: None,
                shards: None,
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
    fn shards_are_counted_apart_from_gpus() {
        // As Slurm 22.05.8 recorded a `--gres=shard:3` job (tests' private Slurm with typed shards).
        let tres =
            parse_tres_string("billing=1,cpu=1,gres/shard:a100=3,gres/shard=3,node=1").unwrap();
        assert_eq!((tres.count, tres.shards), (None, Some(3)));
        assert_eq!(tres.gpu_type.as_deref(), Some("a100"));
        let typed = parse_tres_string("gres/shard:a100=2,gres/shard:v100=1").unwrap();
        assert_eq!(typed.shards, Some(3));
    }

    #[test]
    fn unreadable_counts_are_errors() {
        assert!(parse_tres_string("gres/gpu=two").is_err());
        assert!(parse_tres_string("gres/gpu").is_err());
    }
}
