//! What counts as idle: one rule for every source (docs/architecture.md, "What counts as idle").
//!
//! A holder is idle in a sampling window when its SM activity stayed below the threshold for the
//! whole window: every sample NVML gave for it in the window is below the threshold, and a holder
//! absent from the window's process samples ran no kernel in it (NVML lists only processes that
//! did). The captured H200 shows the two ends: a holder of 10 GiB doing nothing reads smUtil 0 (and
//! disappears from the samples once another process is busy), a bf16 matrix product reads 100.

use serde::{Deserialize, Serialize};

/// How a holder spent one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    Active,
    Idle,
    /// No source tells (a vGPU beside another vGPU; a MIG instance's first window; GPM missing).
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IdleRule {
    /// SM activity (percent) below which a window is idle; 5 by default.
    pub sm_activity_below_percent: f64,
}

impl Default for IdleRule {
    fn default() -> Self {
        Self {
            sm_activity_below_percent: 5.0,
        }
    }
}

impl IdleRule {
    /// The window's activity from the highest SM activity seen in it (`None`: nothing tells).
    pub fn classify(&self, highest_sm_percent: Option<f64>) -> Activity {
        match highest_sm_percent {
            None => Activity::Unknown,
            Some(value) if value >= self.sm_activity_below_percent => Activity::Active,
            Some(_) => Activity::Idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captures_idle_holder_is_idle_and_the_busy_process_active() {
        let rule = IdleRule::default();
        assert_eq!(rule.classify(Some(0.0)), Activity::Idle);
        assert_eq!(rule.classify(Some(100.0)), Activity::Active);
        assert_eq!(rule.classify(Some(4.9)), Activity::Idle);
        assert_eq!(rule.classify(Some(5.0)), Activity::Active);
        assert_eq!(rule.classify(None), Activity::Unknown);
    }
}
