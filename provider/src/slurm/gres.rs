//! GRES strings as Slurm prints them for a node: `gpu:a100:4(S:0-1)`, `gpu:2`, `gpu:1g.10gb`,
//! `gpu:a100:2(IDX:0,2),gpu:1g.10gb:3,shard:8`; used GRES adds index lists (`gpu:a100:3(IDX:0-2)`).
//!
//! Only `gpu` entries are kept; other GRES (`shard`, `mps`, `nic`) are not accelerators we publish.
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
            Some(existing) => existing.count += count,
            None => gpus.push(GpuGres { gpu_type, count }),
        }
    }
    Ok(gpus)
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
