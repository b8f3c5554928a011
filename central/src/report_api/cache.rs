//! The report API's answer cache: the bytes of each answer, kept until the next commit that changes
//! the summaries, so a report asked again costs a lookup instead of a query and a rendering.
//!
//! * Keyed by the normalised request (each parameter as parsed, written back in one form), the
//!   caller's audience (anonymous, a site, or a person's roles: a VO manager's answer is stored
//!   under their VOs and found by no one else), and the month running when it was computed (it
//!   marks the partial month, so an answer of last month is never served this month).
//! * Valid for one report generation ([`accelfed_accounting::repository::Repository::report_generation`]),
//!   read from the database before each report: a generation greater than the cache's empties it,
//!   and an answer computed under an older one than the cache's is not stored. The generation is
//!   read before the report is computed, so an answer is never stored under a generation newer
//!   than the data it was computed from.
//! * Bounded in bytes (answers, keys and a fixed overhead per entry), least recently used first
//!   out; an answer larger than the whole bound is served but not kept.
//!
//! Access is checked before the cache is asked (the handler), so the audience in the key is a
//! second guard, not the only one.

use std::collections::BTreeSet;
use std::sync::Mutex;

use axum::body::Bytes;
use hashlink::LruCache;

use accelfed_accounting::repository::Period;

use crate::access::Caller;

/// The default bound (`[database] report_cache_mib`): 64 MiB holds thousands of answers (a report by VO and month over three
/// years of 30 VOs is about 250 kB of JSON; most answers are a few kB).
pub const DEFAULT_BYTES: usize = 64 << 20;

/// What an entry costs beyond its answer and key text: the key's and the entry's own fields and
/// the map's links, rounded up.
const ENTRY_OVERHEAD: usize = 256;

/// Who asked, as far as it decides what they may see.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Audience {
    Anonymous,
    Site(String),
    Person {
        operator: bool,
        vo_manager: BTreeSet<String>,
    },
}

impl Audience {
    pub fn of(caller: &Caller) -> Self {
        match caller {
            Caller::Anonymous => Self::Anonymous,
            Caller::Site(site) => Self::Site(site.as_str().to_owned()),
            Caller::Person(roles) => Self::Person {
                operator: roles.operator,
                vo_manager: roles.vo_manager.clone(),
            },
        }
    }

    fn weight(&self) -> usize {
        match self {
            Self::Anonymous => 0,
            Self::Site(site) => site.len(),
            Self::Person { vo_manager, .. } => vo_manager.iter().map(|vo| vo.len() + 32).sum(),
        }
    }
}

/// One cached answer's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The request, normalised (see `super::ReportRequest::normalised`).
    pub request: String,
    pub audience: Audience,
    /// The month running when the answer was computed.
    pub month: Period,
}

/// A cached answer: its media type and bytes (shared, not copied, with each response).
#[derive(Debug, Clone)]
pub struct Answer {
    pub csv: bool,
    pub body: Bytes,
}

fn weight(key: &Key, answer: &Answer) -> usize {
    answer.body.len() + key.request.len() + key.audience.weight() + ENTRY_OVERHEAD
}

/// The cache; shared by every request of one `accelfed serve`.
#[derive(Debug)]
pub struct AnswerCache {
    limit: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The generation every entry was computed under.
    generation: i64,
    entries: LruCache<Key, Answer>,
    bytes: usize,
}

impl Inner {
    /// Moves to `generation` if it is newer (emptying the cache); whether the entries are of it.
    fn at(&mut self, generation: i64) -> bool {
        if generation > self.generation {
            self.entries.clear();
            self.bytes = 0;
            self.generation = generation;
        }
        generation == self.generation
    }
}

impl AnswerCache {
    /// A cache of at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            inner: Mutex::new(Inner {
                generation: i64::MIN,
                entries: LruCache::new_unbounded(),
                bytes: 0,
            }),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing here panics while the lock is held; were it poisoned, the entries are still
        // consistent (each change completes before the next statement).
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answer to `key` computed under `generation`, if kept.
    pub fn get(&self, generation: i64, key: &Key) -> Option<Answer> {
        let mut inner = self.inner();
        if !inner.at(generation) {
            return None;
        }
        inner.entries.get(key).cloned()
    }

    /// Keeps `answer` to `key`, computed from data read after `generation` was read.
    pub fn insert(&self, generation: i64, key: Key, answer: Answer) {
        let cost = weight(&key, &answer);
        if cost > self.limit {
            return;
        }
        let mut inner = self.inner();
        // An older generation: the data may already have changed since; not kept.
        if !inner.at(generation) {
            return;
        }
        if let Some(old) = inner.entries.remove(&key) {
            inner.bytes -= weight(&key, &old);
        }
        inner.entries.insert(key, answer);
        inner.bytes += cost;
        while inner.bytes > self.limit {
            let Some((key, answer)) = inner.entries.remove_lru() else {
                break;
            };
            inner.bytes -= weight(&key, &answer);
        }
    }

    /// The bytes held now.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.inner().bytes
    }

    /// The answers held now.
    #[cfg(test)]
    pub fn entries(&self) -> usize {
        self.inner().entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(request: &str, audience: Audience) -> Key {
        Key {
            request: request.to_owned(),
            audience,
            month: "2026-11".parse().unwrap(),
        }
    }

    fn answer(size: usize) -> Answer {
        Answer {
            csv: false,
            body: Bytes::from(vec![b'x'; size]),
        }
    }

    #[test]
    fn an_answer_is_found_only_by_its_audience_and_generation() {
        let cache = AnswerCache::new(DEFAULT_BYTES);
        let manager = |vo: &str| Audience::Person {
            operator: false,
            vo_manager: BTreeSet::from([vo.to_owned()]),
        };
        cache.insert(3, key("by=user", manager("atlas")), answer(10));
        assert!(cache.get(3, &key("by=user", manager("atlas"))).is_some());
        assert!(cache.get(3, &key("by=user", manager("cms"))).is_none());
        assert!(cache.get(3, &key("by=user", Audience::Anonymous)).is_none());
        // A newer generation empties the cache; an answer of an older one is not kept.
        assert!(cache.get(4, &key("by=user", manager("atlas"))).is_none());
        assert_eq!((cache.entries(), cache.bytes()), (0, 0));
        cache.insert(3, key("by=vo", Audience::Anonymous), answer(10));
        assert_eq!(cache.entries(), 0);
    }

    #[test]
    fn the_bound_in_bytes_holds_and_the_least_recently_used_goes_first() {
        let one = weight(&key("a", Audience::Anonymous), &answer(1_000));
        let cache = AnswerCache::new(one * 2);
        cache.insert(1, key("a", Audience::Anonymous), answer(1_000));
        cache.insert(1, key("b", Audience::Anonymous), answer(1_000));
        assert!(cache.get(1, &key("a", Audience::Anonymous)).is_some());
        cache.insert(1, key("c", Audience::Anonymous), answer(1_000));
        assert!(cache.get(1, &key("b", Audience::Anonymous)).is_none());
        assert!(cache.get(1, &key("a", Audience::Anonymous)).is_some());
        assert_eq!(cache.bytes(), one * 2);
        // Larger than the whole bound: not kept, nothing evicted for it.
        cache.insert(1, key("d", Audience::Anonymous), answer(one * 3));
        assert_eq!(cache.entries(), 2);
    }
}
