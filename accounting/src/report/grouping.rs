//! What a report groups by: one dimension, or two (`vo,month`: one row per VO and month), so a
//! VO x month table is one report rather than one run per VO.

use std::fmt;
use std::str::FromStr;

use crate::repository::Dimension;

/// One or two distinct dimensions, in the order given (the rows sort by the first, then the second).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Grouping(Vec<Dimension>);

impl Grouping {
    /// The most dimensions one report groups by.
    pub const MAX: usize = 2;

    /// A grouping by one dimension.
    pub fn one(dimension: Dimension) -> Self {
        Self(vec![dimension])
    }

    /// Checks `dimensions`: one or two, none twice.
    pub fn new(dimensions: Vec<Dimension>) -> Result<Self, String> {
        if dimensions.is_empty() || dimensions.len() > Self::MAX {
            return Err(format!(
                "group by one or two of vo, site, model, month, user, got {}",
                dimensions.len()
            ));
        }
        if dimensions.len() == 2 && dimensions[0] == dimensions[1] {
            return Err(format!("dimension {} is given twice", dimensions[0]));
        }
        Ok(Self(dimensions))
    }

    pub fn dimensions(&self) -> &[Dimension] {
        &self.0
    }

    /// The first dimension: the series of a chart.
    pub fn first(&self) -> Dimension {
        self.0[0]
    }

    pub fn contains(&self, dimension: Dimension) -> bool {
        self.0.contains(&dimension)
    }
}

impl fmt::Display for Grouping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|d| d.name()).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for Grouping {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let dimensions = s
            .split(',')
            .map(|name| name.trim().parse::<Dimension>())
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(dimensions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_one_or_two_distinct_dimensions() {
        let by: Grouping = "vo,month".parse().unwrap();
        assert_eq!(by.dimensions(), [Dimension::Vo, Dimension::Month]);
        assert_eq!(by.to_string(), "vo,month");
        assert_eq!("site".parse::<Grouping>().unwrap().first(), Dimension::Site);
        assert!("vo,vo".parse::<Grouping>().is_err());
        assert!("vo,site,model".parse::<Grouping>().is_err());
        assert!("vo,users".parse::<Grouping>().is_err());
        assert!("".parse::<Grouping>().is_err());
    }
}
