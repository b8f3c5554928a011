//! Broker answers kept between queries. A broker asks the same few questions over and over (the
//! orchestrator's templates name a handful of GPU counts, models and VOs), and each answer is one
//! flavor from every site: selecting it walks thousands of candidates spread over every site's
//! view, which is fast when those are in the CPU's caches and several times slower when queries
//! come a few milliseconds apart. So the offers part of each answer is kept, as bytes, in the index
//! it was selected from.
//!
//! A kept answer is exactly what selecting again would give for as long as no offer changes
//! freshness: an offer is fresh while `now <= expires`, so the selection made at `made` holds
//! until the first expiry at or after `made` (`holds_until`). A push builds a new index, and with
//! it an empty cache; a clock that went back is not trusted with a kept answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};

use super::index::BrokerRequest;

/// How many distinct questions are kept; past that the cache starts again empty (a broker's
/// working set is far smaller, and a flood of distinct questions must not grow memory).
const MOST_KEPT: usize = 256;

/// A broker question with the case the matching ignores taken out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrokerKey {
    num_gpus: u64,
    gpu_vendor: Option<String>,
    gpu_model: Option<String>,
    vo: Option<String>,
    fresh: bool,
}

impl BrokerKey {
    pub fn of(request: &BrokerRequest) -> Self {
        let lower = |text: &Option<String>| text.as_deref().map(str::to_lowercase);
        Self {
            num_gpus: request.num_gpus.to_bits(),
            gpu_vendor: lower(&request.gpu_vendor),
            gpu_model: lower(&request.gpu_model),
            vo: lower(&request.vo),
            fresh: request.fresh,
        }
    }
}

/// The offers of one answer, as the bytes between its list's brackets.
#[derive(Debug)]
pub struct KeptOffers {
    pub bytes: Vec<u8>,
    made: DateTime<Utc>,
    /// The first offer expiry at or after `made`; `None` when no offer expires after it.
    holds_until: Option<DateTime<Utc>>,
}

impl KeptOffers {
    pub fn new(bytes: Vec<u8>, made: DateTime<Utc>, holds_until: Option<DateTime<Utc>>) -> Self {
        Self {
            bytes,
            made,
            holds_until,
        }
    }

    /// Whether selecting at `now` would give these offers with the same freshness.
    fn holds_at(&self, now: DateTime<Utc>) -> bool {
        now >= self.made && self.holds_until.is_none_or(|until| now <= until)
    }
}

/// The kept answers of one index.
#[derive(Debug, Default)]
pub struct BrokerCache {
    kept: Mutex<HashMap<BrokerKey, Arc<KeptOffers>>>,
}

impl BrokerCache {
    /// The kept offers for `key` if they still hold at `now`, else those `select` makes (kept).
    pub fn get_or_select(
        &self,
        key: BrokerKey,
        now: DateTime<Utc>,
        select: impl FnOnce() -> KeptOffers,
    ) -> Arc<KeptOffers> {
        if let Some(kept) = self.lock().get(&key)
            && kept.holds_at(now)
        {
            return Arc::clone(kept);
        }
        // Selected outside the lock: another query may select the same meanwhile, which only
        // costs the work twice.
        let fresh = Arc::new(select());
        let mut kept = self.lock();
        if kept.len() >= MOST_KEPT {
            kept.clear();
        }
        kept.insert(key, Arc::clone(&fresh));
        fresh
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BrokerKey, Arc<KeptOffers>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 1, hour, 0, 0).unwrap()
    }

    fn kept(made: u32, until: Option<u32>) -> KeptOffers {
        KeptOffers::new(b"x".to_vec(), at(made), until.map(at))
    }

    #[test]
    fn kept_offers_hold_from_their_making_to_the_next_expiry_inclusive() {
        let offers = kept(10, Some(12));
        assert!(offers.holds_at(at(10)));
        assert!(offers.holds_at(at(12)));
        assert!(!offers.holds_at(at(12) + chrono::Duration::nanoseconds(1)));
        assert!(!offers.holds_at(at(9)), "a clock that went back");
        assert!(kept(10, None).holds_at(at(23)));
    }

    #[test]
    fn a_question_is_selected_once_while_its_answer_holds() {
        let cache = BrokerCache::default();
        let request = BrokerRequest {
            num_gpus: 2.0,
            gpu_model: Some("A100".into()),
            vo: Some("Atlas".into()),
            ..BrokerRequest::default()
        };
        let selections = std::cell::Cell::new(0);
        let ask = |request: &BrokerRequest, hour| {
            cache.get_or_select(BrokerKey::of(request), at(hour), || {
                selections.set(selections.get() + 1);
                kept(hour, Some(12))
            });
        };
        ask(&request, 10);
        ask(&request, 11);
        // the same question in other case
        let same = BrokerRequest {
            gpu_model: Some("a100".into()),
            vo: Some("ATLAS".into()),
            ..request.clone()
        };
        ask(&same, 11);
        assert_eq!(selections.get(), 1);
        // another question, and the first one past the expiry
        ask(
            &BrokerRequest {
                num_gpus: 4.0,
                ..request.clone()
            },
            11,
        );
        ask(&request, 13);
        assert_eq!(selections.get(), 3);
    }

    #[test]
    fn the_cache_never_keeps_more_than_its_bound() {
        let cache = BrokerCache::default();
        for n in 0..(MOST_KEPT * 3) {
            let request = BrokerRequest {
                num_gpus: n as f64 + 1.0,
                ..BrokerRequest::default()
            };
            cache.get_or_select(BrokerKey::of(&request), at(10), || kept(10, None));
        }
        assert!(cache.lock().len() <= MOST_KEPT);
    }
}
