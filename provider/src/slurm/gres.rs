//! GRES strings as Slurm prints them for a node: `gpu:a100:4(S:0-1)`, `gpu:2`, `gpu:1g.10gb`,
//! `gpu:a100:2(IDX:0,2),gpu:1g.10gb:3,shard:8`; used GRES adds index lists (`gpu:a100:3(IDX:0-2)`).
//!
//! Only `gpu` entries are kept; other GRES (`shard`, `mps`, `nic`) are not accelerators we publish,
//! except that the GPUs shards in use sit on are not free ([`gpus_under_shards`]).
//! A string we cannot read is an error, never zero GPUs: publishing 0 for a node with 8 GPUs would
//! tell brokers the site has none.

/// GPUs of one type (or untyped) in a GRES string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuGres {
    /// The Slurm type (`a100`, `1g.10gb`); `None` when the site declares untyped GPUs.
    pub gpu_type: Option<String>,
    pub count: u64,
}

/// Why a GRES string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read GRES {text:?}: {reason}")]
pub struct GresError {
    pub text: String,
    pub reason: String,
}

/// The GPU entries of a GRES string, in the order printed; the same type twice is summed.
pub fn parse_gpu_gres(text: &str) -> Result<Vec<GpuGres>, GresError> {
    let text_trimmed = text.trim();
    let error = |reason: String| GresError {
        text: text.to_owned(),
        reason,
    };
    if matches!(text_trimmed, "" | "(null)" | "N/A") {
        return Ok(Vec::new());
    }
    let mut gpus: Vec<GpuGres> = Vec::new();
    for item in split_top_level(text_trimmed).map_err(error)? {
        let spec = match trailing_group(item) {
            Some(open) => &item[..open],
            None if item.contains('(') && !item.contains("(null)") => {
                return Err(error(format!("unbalanced parenthesis in {item:?}")));
            }
            None => item,
        };
        let parts: Vec<&str> = spec.split(':').collect();
        if parts[0] != "gpu" {
            continue;
        }
        let (gpu_type, count) = match parts.as_slice() {
            [_] => (None, 1),
            [_, one] => match one.parse::<u64>() {
                Ok(count) => (None, count),
                // `gpu:1g.10gb`: a type with Slurm's default count of one.
                Err(_) if is_type_name(one) => (Some(*one), 1),
                Err(_) => return Err(error(format!("{one:?} is neither a count nor a type"))),
            },
            [_, kind, count] => {
                let count = count
                    .parse::<u64>()
                    .map_err(|_| error(format!("{count:?} is not a GPU count")))?;
                let kind = (!matches!(*kind, "(null)" | "")).then_some(*kind);
                if let Some(kind) = kind
                    && !is_type_name(kind)
                {
                    return Err(error(format!("{kind:?} is not a GPU type")));
                }
                (kind, count)
            }
            _ => return Err(error(format!("too many fields in {item:?}"))),
        };
        let gpu_type = gpu_type.map(str::to_owned);
        match gpus.iter_mut().find(|g| g.gpu_type == gpu_type) {
            Some(existing) => existing.count = existing.count.saturating_add(count),
            None => gpus.push(GpuGres { gpu_type, count }),
        }
    }
    Ok(gpus)
}

/// The GPUs that shards in use sit on, per GPU type, from a node's used GRES
/// (`gpu:a100:1(IDX:2),shard:a100:2(IDX:0-1)`: a100 GPUs 0 and 1). Slurm gives a GPU either whole
/// or as shards, so a GPU with any shard allocated cannot be had whole: it is not free. A shard
/// entry without an index list (`shard:2`) does not say which GPUs it sits on, and is not counted.
pub fn gpus_under_shards(text: &str) -> Result<Vec<GpuGres>, GresError> {
    let error = |reason: String| GresError {
        text: text.to_owned(),
        reason,
    };
    let text = text.trim();
    if matches!(text, "" | "(null)" | "N/A") {
        return Ok(Vec::new());
    }
    let mut whole: Vec<(Option<&str>, Vec<u32>)> = Vec::new();
    let mut shards: Vec<(Option<&str>, Vec<u32>)> = Vec::new();
    for item in split_top_level(text).map_err(error)? {
        let Some(open) = trailing_group(item) else {
            continue;
        };
        let Some(list) = item[open + 1..item.len() - 1].strip_prefix("IDX:") else {
            continue;
        };
        let parts: Vec<&str> = item[..open].split(':').collect();
        let into = match parts[0] {
            "gpu" => &mut whole,
            "shard" => &mut shards,
            _ => continue,
        };
        let gpu_type = match parts.as_slice() {
            [_, kind, _] if !matches!(*kind, "(null)" | "") => Some(*kind),
            _ => None,
        };
        let indices = index_list(list).map_err(|reason| error(format!("{item:?}: {reason}")))?;
        match into.iter_mut().find(|(kind, _)| *kind == gpu_type) {
            Some((_, held)) => held.extend(indices),
            None => into.push((gpu_type, indices)),
        }
    }
    Ok(shards
        .into_iter()
        .map(|(gpu_type, mut indices)| {
            let taken = whole.iter().find(|(kind, _)| *kind == gpu_type);
            indices.retain(|index| taken.is_none_or(|(_, held)| !held.contains(index)));
            indices.sort_unstable();
            indices.dedup();
            GpuGres {
                gpu_type: gpu_type.map(str::to_owned),
                count: indices.len() as u64,
            }
        })
        .filter(|gpus| gpus.count > 0)
        .collect())
}

/// The GPU shards a node's GRES configures (`gpu:a100:4,shard:a100:16` -> 16); what cannot be read
/// counts none (the GPU entries of the same string are read strictly, and fail there).
pub fn shard_count(text: &str) -> u64 {
    let Ok(items) = split_top_level(text.trim()) else {
        return 0;
    };
    items
        .iter()
        .map(|item| trailing_group(item).map_or(*item, |open| &item[..open]))
        .filter_map(
            |spec| match spec.split(':').collect::<Vec<_>>().as_slice() {
                ["shard", count] | ["shard", _, count] => count.parse::<u64>().ok(),
                _ => None,
            },
        )
        .fold(0, u64::saturating_add)
}

/// `0-2,5` -> 0, 1, 2, 5; `N/A` -> none.
fn index_list(list: &str) -> Result<Vec<u32>, String> {
    if list == "N/A" {
        return Ok(Vec::new());
    }
    let number = |text: &str| {
        text.parse::<u32>()
            .map_err(|_| format!("{text:?} is not a GPU index"))
    };
    let mut indices = Vec::new();
    for range in list.split(',') {
        let (first, last) = match range.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(range)?, number(range)?),
        };
        if last < first || last - first > 1024 {
            return Err(format!("{range:?} is not a range of GPU indices"));
        }
        indices.extend(first..=last);
    }
    Ok(indices)
}

/// Where the trailing `(...)` group (`(S:0-1)`, `(IDX:0,2)`) starts, if the item ends with one.
fn trailing_group(item: &str) -> Option<usize> {
    if !item.ends_with(')') {
        return None;
    }
    let mut depth = 0;
    for (index, c) in item.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

fn is_type_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Splits at commas outside parentheses (`(IDX:0,2)` holds commas of its own).
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (index, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced parenthesis".to_owned());
                }
            }
            ',' if depth == 0 => {
                items.push(text[start..index].trim());
                start = index + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced parenthesis".to_owned());
    }
    items.push(text[start..].trim());
    if items.iter().any(|item| item.is_empty()) {
        return Err("empty entry".to_owned());
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gres(kind: Option<&str>, count: u64) -> GpuGres {
        GpuGres {
            gpu_type: kind.map(str::to_owned),
            count,
        }
    }

    #[test]
    fn typed_untyped_mig_and_mixed_lists() {
        assert_eq!(
            parse_gpu_gres("gpu:a100:4(S:0-1)").unwrap(),
            vec![gres(Some("a100"), 4)]
        );
        assert_eq!(parse_gpu_gres("gpu:2").unwrap(), vec![gres(None, 2)]);
        assert_eq!(
            parse_gpu_gres("gpu:1g.10gb").unwrap(),
            vec![gres(Some("1g.10gb"), 1)]
        );
        assert_eq!(
            parse_gpu_gres("gpu:a100:2(IDX:0,2),gpu:1g.10gb:3(S:1),shard:8,mps:200").unwrap(),
            vec![gres(Some("a100"), 2), gres(Some("1g.10gb"), 3)]
        );
        assert_eq!(
            parse_gpu_gres("gpu:(null):0(IDX:N/A)").unwrap(),
            vec![gres(None, 0)]
        );
        assert_eq!(
            parse_gpu_gres("gpu:a100:3(IDX:0-2)").unwrap(),
            vec![gres(Some("a100"), 3)]
        );
    }

    #[test]
    fn gpus_with_shards_in_use_are_read_from_the_index_lists() {
        // What Slurm 22.05 printed with a whole-GPU job and two shard jobs on a 4-GPU node.
        assert_eq!(
            gpus_under_shards("gpu:a100:1(IDX:2),shard:a100:2(IDX:0-1)").unwrap(),
            vec![gres(Some("a100"), 2)]
        );
        assert_eq!(
            gpus_under_shards("gpu:a100:0(IDX:N/A),shard:a100:5(IDX:0-1,3),shard:a100:1(IDX:3)")
                .unwrap(),
            vec![gres(Some("a100"), 3)]
        );
        for text in [
            "",
            "gpu:a100:3(IDX:0-2)",
            "shard:2",
            "shard:a100:0(IDX:N/A)",
        ] {
            assert_eq!(gpus_under_shards(text).unwrap(), vec![], "{text}");
        }
        assert!(gpus_under_shards("shard:a100:1(IDX:x)").is_err());
    }

    #[test]
    fn configured_shards_are_counted() {
        assert_eq!(shard_count("gpu:a100:4,shard:a100:16"), 16);
        assert_eq!(shard_count("gpu:2(S:0),shard:8(S:0),shard:v100:4"), 12);
        for text in ["", "(null)", "gpu:a100:4", "shard:many"] {
            assert_eq!(shard_count(text), 0, "{text}");
        }
    }

    #[test]
    fn empty_and_non_gpu_gres_have_no_gpus() {
        for text in ["", "(null)", "N/A", "shard:4", "nic:mlx5:2(S:0)"] {
            assert_eq!(parse_gpu_gres(text).unwrap(), vec![], "{text}");
        }
    }

    #[test]
    fn unreadable_gres_is_an_error_not_zero() {
        for text in [
            "gpu:a100:four",
            "gpu:a100:4(S:0-1",
            "gpu:a100:4,,gpu:2",
            "gpu:a:b:c:d",
            "gpu:a100:4)",
        ] {
            let err = parse_gpu_gres(text).unwrap_err();
            assert_eq!(err.text, text);
        }
    }
}
