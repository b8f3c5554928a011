//! GPU counts. Fractions are real: a time-sliced or vGPU share of one card counts 0.5, and GLUE2
//! consumers must see 0.5, not 0 or 1.

use std::fmt;
use std::ops::{Add, Mul, Sub};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a count was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CountError {
    #[error("GPU count must be a finite number, got {0}")]
    NotFinite(f64),
    #[error("GPU count must not be negative, got {0}")]
    Negative(f64),
    #[error("GPU count must be a number, got {0:?}")]
    NotANumber(String),
    #[error("GPU count {0} is more GPUs than any site holds (at most {max})", max = GpuCount::MAX)]
    TooLarge(f64),
}

/// A non-negative, finite number of GPUs. Whole counts render as integers (`4`), fractions with up
/// to three decimals (`0.5`), or three significant digits below a thousandth (`0.0004`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct GpuCount(f64);

impl GpuCount {
    pub const ZERO: GpuCount = GpuCount(0.0);
    /// The largest count accepted where counts enter (configuration, manual usage, records,
    /// documents): ten million GPUs, far above any site, and far below where `u64` renderings
    /// of integer attributes or the repository's integer columns would overflow (a count of 1e300
    /// rendered as 18446744073709551615).
    pub const MAX: f64 = 1e7;

    pub fn new(value: f64) -> Result<Self, CountError> {
        if !value.is_finite() {
            return Err(CountError::NotFinite(value));
        }
        if value < 0.0 {
            return Err(CountError::Negative(value));
        }
        if value > Self::MAX {
            return Err(CountError::TooLarge(value));
        }
        // Normalise -0.0 so it renders as 0.
        Ok(Self(value + 0.0))
    }

    /// A whole number of GPUs; cannot fail.
    pub fn whole(value: u32) -> Self {
        Self(f64::from(value))
    }

    pub fn get(self) -> f64 {
        self.0
    }

    pub fn is_whole(self) -> bool {
        self.0.fract() == 0.0
    }

    /// The count as an integer when it is whole (for integer-typed LDAP attributes).
    pub fn as_whole(self) -> Option<u64> {
        // Counts above 2^53 cannot be whole-exact anyway; GPUs never come in such numbers.
        (self.is_whole() && self.0 <= 9_007_199_254_740_992.0).then_some(self.0 as u64)
    }

    /// `self - other`, or `None` when that would be negative.
    pub fn checked_sub(self, other: GpuCount) -> Option<GpuCount> {
        let diff = self.0 - other.0;
        (diff >= -1e-9).then(|| GpuCount(diff.max(0.0)))
    }

    /// Whether this is at least `min`, give or take a billionth: a count made of fractions (7
    /// slices of 1/7 GPU) may land a hair below the whole it is, and must still match it.
    pub fn at_least(self, min: GpuCount) -> bool {
        self.0 + 1e-9 >= min.0
    }

    /// Rounds to the thousandth, the precision every rendering uses; a count above zero that
    /// would round to 0 keeps three significant digits instead (0.0004 stays 0.0004), since a
    /// consumer reading 0 would take a share that exists for none.
    fn rounded(self) -> f64 {
        let thousandths = (self.0 * 1000.0).round() / 1000.0;
        if thousandths != 0.0 || self.0 == 0.0 {
            return thousandths;
        }
        let scale = 10f64.powi(2 - self.0.log10().floor() as i32);
        (self.0 * scale).round() / scale
    }
}

impl fmt::Display for GpuCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = self.rounded();
        if value.fract() == 0.0 {
            write!(f, "{}", value as u64)
        } else {
            // `{}` on f64 prints the shortest representation that round-trips: 0.5, 0.125.
            write!(f, "{value}")
        }
    }
}

impl std::str::FromStr for GpuCount {
    type Err = CountError;
    fn from_str(s: &str) -> Result<Self, CountError> {
        let value: f64 = s
            .trim()
            .parse()
            .map_err(|_| CountError::NotANumber(s.to_owned()))?;
        Self::new(value)
    }
}

impl Add for GpuCount {
    type Output = GpuCount;
    fn add(self, rhs: GpuCount) -> GpuCount {
        GpuCount(self.0 + rhs.0)
    }
}

impl Sub for GpuCount {
    type Output = GpuCount;
    /// Saturates at zero; use [`GpuCount::checked_sub`] where going below zero is an error.
    fn sub(self, rhs: GpuCount) -> GpuCount {
        GpuCount((self.0 - rhs.0).max(0.0))
    }
}

impl Mul<u32> for GpuCount {
    type Output = GpuCount;
    fn mul(self, rhs: u32) -> GpuCount {
        GpuCount(self.0 * f64::from(rhs))
    }
}

impl std::iter::Sum for GpuCount {
    fn sum<I: Iterator<Item = GpuCount>>(iter: I) -> GpuCount {
        iter.fold(GpuCount::ZERO, Add::add)
    }
}

impl Serialize for GpuCount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.rounded();
        match GpuCount(value).as_whole() {
            Some(whole) => serializer.serialize_u64(whole),
            None => serializer.serialize_f64(value),
        }
    }
}

impl<'de> Deserialize<'de> for GpuCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Float(f64),
            Text(String),
        }
        let count = match Raw::deserialize(deserializer)? {
            Raw::Int(value) => GpuCount::new(value as f64),
            Raw::Float(value) => GpuCount::new(value),
            Raw::Text(text) => text.parse(),
        };
        count.map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_and_fractional_counts_render_as_consumers_expect() {
        assert_eq!(GpuCount::whole(4).to_string(), "4");
        assert_eq!(GpuCount::new(0.5).unwrap().to_string(), "0.5");
        assert_eq!(GpuCount::new(1.0 / 3.0).unwrap().to_string(), "0.333");
        assert_eq!(serde_json::to_string(&GpuCount::whole(8)).unwrap(), "8");
        assert_eq!(
            serde_json::to_string(&GpuCount::new(0.25).unwrap()).unwrap(),
            "0.25"
        );
        // Above zero never renders as 0: three significant digits where thousandths would.
        assert_eq!(GpuCount::new(0.0004).unwrap().to_string(), "0.0004");
        assert_eq!(GpuCount::new(1.0 / 3000.0).unwrap().to_string(), "0.000333");
        assert_eq!(
            serde_json::to_string(&GpuCount::new(0.00012345).unwrap()).unwrap(),
            "0.000123"
        );
        assert_eq!(GpuCount::new(0.0006).unwrap().to_string(), "0.001");
        assert_eq!(GpuCount::ZERO.to_string(), "0");
    }

    #[test]
    fn negative_nan_and_text_counts_are_refused() {
        assert_eq!(GpuCount::new(-1.0), Err(CountError::Negative(-1.0)));
        assert!(matches!(
            GpuCount::new(f64::NAN),
            Err(CountError::NotFinite(_))
        ));
        assert!(matches!(
            GpuCount::new(f64::INFINITY),
            Err(CountError::NotFinite(_))
        ));
        assert!(matches!(
            "many".parse::<GpuCount>(),
            Err(CountError::NotANumber(_))
        ));
        assert_eq!(GpuCount::new(-0.0).unwrap().to_string(), "0");
        // Accepted once, these became `null` in JSON and 18446744073709551615 in LDIF and XML.
        for huge in [1e308, 1e300, 18_446_744_073_709_551_616.0] {
            assert_eq!(GpuCount::new(huge), Err(CountError::TooLarge(huge)));
        }
        assert!(GpuCount::new(GpuCount::MAX).is_ok());
    }

    #[test]
    fn deserializes_integers_floats_and_numeric_strings() {
        let counts: Vec<GpuCount> = serde_json::from_str(r#"[2, 0.5, "1.5"]"#).unwrap();
        assert_eq!(
            counts,
            vec![GpuCount::whole(2), GpuCount(0.5), GpuCount(1.5)]
        );
        let err = serde_json::from_str::<GpuCount>("-3")
            .unwrap_err()
            .to_string();
        assert!(err.contains("must not be negative"), "{err}");
    }

    #[test]
    fn at_least_forgives_what_fractions_lose() {
        let sevenths = GpuCount::new(1.0 / 7.0).unwrap() * 7;
        assert!(sevenths.at_least(GpuCount::whole(1)));
        assert!(GpuCount::whole(2).at_least(GpuCount::whole(2)));
        assert!(!GpuCount::new(1.999).unwrap().at_least(GpuCount::whole(2)));
    }

    #[test]
    fn subtraction_that_would_go_negative_is_detected() {
        assert_eq!(GpuCount::whole(2).checked_sub(GpuCount::whole(3)), None);
        assert_eq!(
            GpuCount::whole(3).checked_sub(GpuCount::whole(2)),
            Some(GpuCount::whole(1))
        );
    }
}
