//! The JSON answers of the offer queries, made from bytes rendered once per offer when a site's
//! view is built: an answer is then a copy of the selected offers' bytes, not a serialisation of
//! each offer per query.
//!
//! An offer's JSON is what serde makes of [`Offer`], whose last field is `fresh`; only that field
//! depends on the time of the query. So each offer keeps its JSON up to and including `"fresh":`,
//! and an answer appends `true}` or `false}`. The bytes are the same as serialising the offers
//! with serde (a test holds that).

use chrono::{DateTime, Utc};

use accelfed_schemas::offer::Offer;

const FRESH_TRUE: &[u8] = b"true}";
const FRESH_FALSE: &[u8] = b"false}";

/// The rendered offers of one site, in one buffer.
#[derive(Debug, Default)]
pub struct RenderedOffers {
    bytes: Vec<u8>,
    /// Where each offer's bytes end in `bytes`, at the offer's position.
    ends: Vec<usize>,
}

impl RenderedOffers {
    pub fn new(offers: &[Offer]) -> Self {
        let mut rendered = RenderedOffers {
            bytes: Vec::with_capacity(offers.len() * 512),
            ends: Vec::with_capacity(offers.len()),
        };
        for offer in offers {
            let whole = serde_json::to_vec(&Offer {
                fresh: true,
                ..offer.clone()
            })
            .unwrap_or_default();
            // `fresh` is the struct's last field: the bytes end with `true}`. Should that ever
            // change, the offer is rendered whole at answer time instead (see `push`).
            if whole.ends_with(FRESH_TRUE) {
                rendered
                    .bytes
                    .extend_from_slice(&whole[..whole.len() - FRESH_TRUE.len()]);
            }
            rendered.ends.push(rendered.bytes.len());
        }
        rendered
    }

    /// The offer's bytes up to `"fresh":`; empty when it could not be rendered ahead.
    fn prefix(&self, position: usize) -> &[u8] {
        let start = position
            .checked_sub(1)
            .and_then(|previous| self.ends.get(previous))
            .copied()
            .unwrap_or(0);
        let end = self.ends.get(position).copied().unwrap_or(start);
        &self.bytes[start..end]
    }
}

/// The answer made at `now` whose offers are `list` (from [`OffersAnswer::into_list`]).
pub fn wrap(now: DateTime<Utc>, list: &[u8]) -> Vec<u8> {
    let mut answer = OffersAnswer::new(now, 0);
    answer.body.reserve(list.len() + 2);
    answer.body.extend_from_slice(list);
    answer.finish()
}

/// An offers answer being written: `{"generated_at":...,"offers":[...]}`.
#[derive(Debug)]
pub struct OffersAnswer {
    body: Vec<u8>,
    first: bool,
}

impl OffersAnswer {
    /// An answer made at `now`, with room for about `offers` offers.
    pub fn new(now: DateTime<Utc>, offers: usize) -> Self {
        let mut body = Vec::with_capacity(64 + offers * 640);
        body.extend_from_slice(b"{\"generated_at\":");
        // A DateTime always serialises; the same form as serde gives the whole answer.
        let _ = serde_json::to_writer(&mut body, &now);
        body.extend_from_slice(b",\"offers\":[");
        Self { body, first: true }
    }

    /// Only the offers, comma-separated, with room for about `offers`: the inside of an answer's
    /// list, to be kept and [`wrap`]ped later.
    pub fn list(offers: usize) -> Self {
        Self {
            body: Vec::with_capacity(offers * 640),
            first: true,
        }
    }

    /// The bytes of an answer made with [`OffersAnswer::list`].
    pub fn into_list(self) -> Vec<u8> {
        self.body
    }

    /// Appends the offer at `position` of `rendered` (its `offer` for the rare one not rendered
    /// ahead), marked fresh or stale.
    pub fn push(&mut self, rendered: &RenderedOffers, position: usize, offer: &Offer, fresh: bool) {
        if !self.first {
            self.body.push(b',');
        }
        self.first = false;
        let prefix = rendered.prefix(position);
        if prefix.is_empty() {
            let _ = serde_json::to_writer(
                &mut self.body,
                &Offer {
                    fresh,
                    ..offer.clone()
                },
            );
            return;
        }
        self.body.extend_from_slice(prefix);
        self.body
            .extend_from_slice(if fresh { FRESH_TRUE } else { FRESH_FALSE });
    }

    /// Appends `offer` rendered whole (an offer whose counts differ from its rendered bytes).
    pub fn push_whole(&mut self, offer: &Offer) {
        if !self.first {
            self.body.push(b',');
        }
        self.first = false;
        let _ = serde_json::to_writer(&mut self.body, offer);
    }

    /// The answer's bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.body.extend_from_slice(b"]}");
        self.body
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use accelfed_schemas::glue::{from_json, sample};
    use accelfed_schemas::gpu::GpuCount;
    use accelfed_schemas::offer::offers;
    use accelfed_schemas::render::json;

    #[derive(serde::Serialize)]
    struct Whole<'a> {
        generated_at: DateTime<Utc>,
        offers: &'a [Offer],
    }

    #[test]
    fn answers_are_the_bytes_serde_makes_fresh_or_stale() {
        let parsed = from_json::parse(&json::render(&sample::snapshot("S"))).unwrap();
        let mut site = offers(&parsed.entities, &parsed.stamps);
        // A name that needs escaping, and an offer with most optional fields absent.
        site[0].resource_name = "quote \" and \u{e9} and \\".to_owned();
        site[1].memory_mb = None;
        site[1].compute_capability = None;
        site[1].free = None;
        site[1].gpus_each = GpuCount::new(0.5).unwrap();
        // A count of more decimals than the answer writes.
        site[1].free_physical = Some(GpuCount::new(36.0 / 7.0).unwrap());
        let rendered = RenderedOffers::new(&site);
        let now = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap()
            + chrono::Duration::nanoseconds(123_456_789);
        for pattern in [
            [true, true, true],
            [false, true, false],
            [false, false, false],
        ] {
            let mut answer = OffersAnswer::new(now, site.len());
            let mut expected = Vec::new();
            for (position, (offer, fresh)) in site.iter().zip(pattern).enumerate() {
                answer.push(&rendered, position, offer, fresh);
                expected.push(Offer {
                    fresh,
                    ..offer.clone()
                });
            }
            let whole = serde_json::to_vec(&Whole {
                generated_at: now,
                offers: &expected,
            })
            .unwrap();
            assert_eq!(
                String::from_utf8(answer.finish()).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
    }

    #[test]
    fn an_empty_answer_is_an_empty_list() {
        let now = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
        let whole = serde_json::to_vec(&Whole {
            generated_at: now,
            offers: &[],
        })
        .unwrap();
        assert_eq!(OffersAnswer::new(now, 0).finish(), whole);
    }
}
