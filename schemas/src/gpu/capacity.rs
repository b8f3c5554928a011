//! Capacity: how many GPUs exist, how many are in use and how many a user could get now. No provider
//! of this field published it before; brokers need "free" more than anything else.

use serde::Serialize;

use super::GpuCount;

/// Why a capacity does not add up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CapacityError {
    #[error("{used} used plus {unavailable} unavailable GPUs exceed the {total} that exist")]
    Overcommitted {
        total: GpuCount,
        used: GpuCount,
        unavailable: GpuCount,
    },
}

/// Total, used and free GPUs of a manager, share or environment. `total - used - free` are the GPUs
/// that exist but cannot be had (nodes down, drained or cordoned).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Capacity {
    pub total: GpuCount,
    pub used: GpuCount,
    pub free: GpuCount,
}

impl Capacity {
    /// From what a middleware reports: everything not used and not unavailable is free.
    pub fn from_usage(
        total: GpuCount,
        used: GpuCount,
        unavailable: GpuCount,
    ) -> Result<Self, CapacityError> {
        let free = total
            .checked_sub(used)
            .and_then(|rest| rest.checked_sub(unavailable))
            .ok_or(CapacityError::Overcommitted {
                total,
                used,
                unavailable,
            })?;
        Ok(Self { total, used, free })
    }

    pub fn unavailable(self) -> GpuCount {
        self.total - self.used - self.free
    }
}

impl std::ops::Add for Capacity {
    type Output = Capacity;
    fn add(self, rhs: Capacity) -> Capacity {
        Capacity {
            total: self.total + rhs.total,
            used: self.used + rhs.used,
            free: self.free + rhs.free,
        }
    }
}

impl std::iter::Sum for Capacity {
    fn sum<I: Iterator<Item = Capacity>>(iter: I) -> Capacity {
        iter.fold(Capacity::default(), std::ops::Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_is_what_is_neither_used_nor_unavailable() {
        let capacity =
            Capacity::from_usage(GpuCount::whole(16), GpuCount::whole(6), GpuCount::whole(4))
                .unwrap();
        assert_eq!(capacity.free, GpuCount::whole(6));
        assert_eq!(capacity.unavailable(), GpuCount::whole(4));
    }

    #[test]
    fn more_used_than_exist_is_an_error_naming_the_numbers() {
        let err = Capacity::from_usage(GpuCount::whole(4), GpuCount::whole(5), GpuCount::ZERO)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "5 used plus 0 unavailable GPUs exceed the 4 that exist"
        );
    }
}
