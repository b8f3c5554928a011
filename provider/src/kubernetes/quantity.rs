//! Kubernetes quantities of extended resources (`nvidia.com/gpu: "4"`).
//!
//! Extended resources are whole numbers: the API server refuses fractional ones in pod specs, and
//! device plugins advertise whole devices. A quantity text may still carry a suffix (`1k`, `2000m`)
//! or be garbage in a hand-edited object; anything that is not a whole, non-negative number is an
//! error the caller logs with the object's name, never silently rounded.

/// Why a quantity is not a GPU count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("quantity {text:?} is not a whole number of devices")]
pub struct QuantityError {
    pub text: String,
}

/// The whole number a quantity stands for: `"4"`, `"1k"` (1000), `"2000m"` (2), `"1Ki"` (1024).
pub fn whole(text: &str) -> Result<u64, QuantityError> {
    let error = || QuantityError {
        text: text.to_owned(),
    };
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, suffix) = trimmed.split_at(digits_end);
    if digits.is_empty() {
        return Err(error());
    }
    let number: u64 = digits.parse().map_err(|_| error())?;
    let (multiplier, divisor): (u64, u64) = match suffix {
        "" => (1, 1),
        "m" => (1, 1000),
        "k" => (1000, 1),
        "M" => (1_000_000, 1),
        "G" => (1_000_000_000, 1),
        "Ki" => (1 << 10, 1),
        "Mi" => (1 << 20, 1),
        "Gi" => (1 << 30, 1),
        _ => return Err(error()),
    };
    if !number.is_multiple_of(divisor) {
        return Err(error());
    }
    (number / divisor).checked_mul(multiplier).ok_or_else(error)
}

/// Why a quantity is not an amount of CPU.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "quantity {text:?} is not an amount of CPU (cores like \"4\" or \"0.5\", or millicores like \"500m\")"
)]
pub struct CpuQuantityError {
    pub text: String,
}

/// A CPU quantity in millicores: `"4"` (4000), `"0.5"` (500), `"63500m"` (63500). These are the
/// forms the API server writes CPU in (it canonicalises to whole cores or millicores); finer
/// fractions than a millicore do not exist for CPU and are refused, as is anything else.
pub fn millicores(text: &str) -> Result<u64, CpuQuantityError> {
    let error = || CpuQuantityError {
        text: text.to_owned(),
    };
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let trimmed = text.trim();
    if let Some(millis) = trimmed.strip_suffix('m') {
        return if digits(millis) {
            millis.parse().map_err(|_| error())
        } else {
            Err(error())
        };
    }
    let (whole_part, fraction) = match trimmed.split_once('.') {
        Some((whole_part, fraction)) if digits(fraction) => (whole_part, fraction),
        Some(_) => return Err(error()),
        None => (trimmed, ""),
    };
    if !digits(whole_part) || fraction.len() > 3 {
        return Err(error());
    }
    let cores: u64 = whole_part.parse().map_err(|_| error())?;
    let thousandths: u64 = format!("{fraction:0<3}").parse().map_err(|_| error())?;
    cores
        .checked_mul(1000)
        .and_then(|millis| millis.checked_add(thousandths))
        .ok_or_else(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_quantities_read_as_millicores() {
        assert_eq!(millicores("4"), Ok(4000));
        assert_eq!(millicores("0.5"), Ok(500));
        assert_eq!(millicores("1.25"), Ok(1250));
        assert_eq!(millicores("63500m"), Ok(63_500));
        assert_eq!(millicores("0"), Ok(0));
        for text in [
            "",
            "m",
            "1.2345",
            "-1",
            "1e3",
            "four",
            "1.",
            ".5",
            "2k",
            "99999999999999999999",
        ] {
            assert!(millicores(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn whole_numbers_and_suffixes_read() {
        assert_eq!(whole("4"), Ok(4));
        assert_eq!(whole("0"), Ok(0));
        assert_eq!(whole("1k"), Ok(1000));
        assert_eq!(whole("2000m"), Ok(2));
        assert_eq!(whole("1Ki"), Ok(1024));
    }

    #[test]
    fn fractions_and_garbage_are_errors() {
        for text in [
            "1.5",
            "500m",
            "",
            "-1",
            "four",
            "4x",
            "1e3",
            "99999999999999999999",
        ] {
            assert!(whole(text).is_err(), "{text:?} was accepted");
        }
        assert_eq!(
            whole("0.5").unwrap_err().to_string(),
            "quantity \"0.5\" is not a whole number of devices"
        );
    }
}
