//! One site's posting lists: for each model word, each VO and the cloud kind, the positions of the
//! site's offers that have it, in offer order. A query takes the shortest list its filter names as
//! its candidates and checks only those, instead of every offer of every site.
//!
//! The lists only narrow: every candidate is still checked against the whole filter, so a query
//! selects exactly what a scan would, in the same order.

use std::collections::HashMap;

use super::intersect::intersect;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::{Offer, ServiceKind};

/// Posting lists of one site, built with its view and never changed.
#[derive(Debug, Default)]
pub struct Postings {
    /// Offer positions by model token (the tokens [`accelfed_schemas::gpu::GpuModel::tokens`]
    /// yields: lowercase, vendor and product-line words dropped).
    by_token: HashMap<String, Vec<u32>>,
    /// Offer positions by VO, ASCII-lowercased: the filter compares VOs ignoring ASCII case.
    by_vo: HashMap<String, Vec<u32>>,
    /// Positions of the cloud flavors (the broker answers with flavors only).
    cloud: Vec<u32>,
    /// Positions of the offers with at least 2^i GPUs each, at i: a `min_gpus` query (the broker's
    /// `num_gpus`) reads only offers that may have enough, not every offer of its model.
    by_gpus: Vec<Vec<u32>>,
    /// How many offers the site has: the candidates when the filter names no list.
    len: u32,
}

/// What a query names that posting lists can narrow by. `None` names no such field.
#[derive(Debug, Clone, Copy, Default)]
pub struct Narrowing<'q> {
    /// The query's model tokens (never empty: a query whose model has no words matches nothing and
    /// is answered before any site is looked at).
    pub tokens: Option<&'q [String]>,
    /// The VO, already ASCII-lowercased.
    pub vo: Option<&'q str>,
    pub cloud_only: bool,
    /// The query's `min_gpus`: narrows to the offers with at least the power of two at or below it
    /// (the exact count is the caller's check).
    pub min_gpus: Option<GpuCount>,
}

impl Narrowing<'_> {
    /// Whether every list this names is intersected, so candidates have every model word and
    /// the VO.
    pub fn exact(&self) -> bool {
        let lists = self.tokens.map_or(0, <[String]>::len)
            + usize::from(self.vo.is_some())
            + usize::from(self.cloud_only)
            + usize::from(self.gpu_step().is_some());
        lists <= MOST_LISTS
    }

    /// The GPU list a `min_gpus` query reads: the largest power of two at or below it.
    pub fn gpu_step(&self) -> Option<u8> {
        let min = self.min_gpus?.get();
        (min >= 1.0).then(|| (min.log2().floor() as u8).min(GPU_STEPS - 1))
    }
}

/// GPU lists kept: at least 1, 2, 4, ... 128 GPUs each.
const GPU_STEPS: u8 = 8;

/// Whether `gpus` each is enough for the GPU list of `step` (with the tolerance of the caller's
/// check, so the list never leaves out an offer the check would take).
fn reaches(gpus: GpuCount, step: u8) -> bool {
    gpus.at_least(GpuCount::whole(1u32 << step))
}

/// The most lists one site's candidates are intersected from; a query naming more lists (more
/// model words) is narrowed by the first ones, and its caller checks the model words itself.
pub const MOST_LISTS: usize = 8;

impl Postings {
    /// The lists of `offers`; `model_tokens` holds each offer's model tokens, at its position.
    pub fn new(offers: &[Offer], model_tokens: &[Vec<String>]) -> Self {
        let mut postings = Postings {
            len: u32::try_from(offers.len()).unwrap_or(u32::MAX),
            ..Postings::default()
        };
        for (position, (offer, tokens)) in offers.iter().zip(model_tokens).enumerate() {
            let Ok(position) = u32::try_from(position) else {
                break;
            };
            for token in tokens {
                push_once(
                    postings.by_token.entry(token.clone()).or_default(),
                    position,
                );
            }
            for vo in &offer.vos {
                push_once(
                    postings.by_vo.entry(vo.to_ascii_lowercase()).or_default(),
                    position,
                );
            }
            if offer.service_kind == ServiceKind::Cloud {
                postings.cloud.push(position);
            }
            for step in 0..GPU_STEPS {
                if !reaches(offer.gpus_each, step) {
                    break;
                }
                if postings.by_gpus.len() <= usize::from(step) {
                    postings.by_gpus.push(Vec::new());
                }
                postings.by_gpus[usize::from(step)].push(position);
            }
        }
        postings
    }

    /// Calls `found` with each position in every list `narrowing` names, ascending: the shortest
    /// list, each of its positions looked up in the others. With no list named, every position.
    /// Exact when the query names at most [`MOST_LISTS`] lists (see [`Narrowing::exact`]).
    pub fn for_each_candidate<'p>(&'p self, narrowing: &Narrowing, mut found: impl FnMut(usize)) {
        let mut lists: [&'p [u32]; MOST_LISTS] = [&[]; MOST_LISTS];
        let mut count = 0;
        let mut take = |list: Option<&'p Vec<u32>>, lists: &mut [&'p [u32]; MOST_LISTS]| -> bool {
            let Some(list) = list else {
                return false;
            };
            if count < MOST_LISTS {
                lists[count] = list;
                count += 1;
            }
            true
        };
        // A word, VO or GPU count that no offer of the site has: no candidates. The VO, the kind
        // and the GPU count come first, so only model words are ever left out (the caller checks
        // those).
        if let Some(vo) = narrowing.vo
            && !take(self.by_vo.get(vo), &mut lists)
        {
            return;
        }
        if narrowing.cloud_only {
            take(Some(&self.cloud), &mut lists);
        }
        if let Some(step) = narrowing.gpu_step()
            && !take(self.by_gpus.get(usize::from(step)), &mut lists)
        {
            return;
        }
        for token in narrowing.tokens.unwrap_or_default() {
            if !take(self.by_token.get(token), &mut lists) {
                return;
            }
        }
        let lists = &mut lists[..count];
        if lists.is_empty() {
            (0..self.len as usize).for_each(found);
            return;
        }
        lists.sort_by_key(|list| list.len());
        let (shortest, others) = lists.split_at_mut(1);
        intersect(shortest[0], others, |position| found(position as usize));
    }
}

/// Positions arrive in ascending order; a token or VO named twice by one offer is listed once.
fn push_once(list: &mut Vec<u32>, position: u32) {
    if list.last() != Some(&position) {
        list.push(position);
    }
}

/// What a posting list is of: a model word, a VO (ASCII-lowercased), the cloud kind or at least
/// 2^n GPUs each.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    Token(String),
    Vo(String),
    Cloud,
    GpusAtLeast(u8),
}

impl Postings {
    /// Every list of the site with its key.
    pub fn lists(&self) -> impl Iterator<Item = (Key, &[u32])> {
        let tokens = self
            .by_token
            .iter()
            .map(|(token, list)| (Key::Token(token.clone()), list.as_slice()));
        let vos = self
            .by_vo
            .iter()
            .map(|(vo, list)| (Key::Vo(vo.clone()), list.as_slice()));
        let gpus = (0u8..)
            .zip(&self.by_gpus)
            .map(|(step, list)| (Key::GpusAtLeast(step), list.as_slice()));
        tokens
            .chain(vos)
            .chain(std::iter::once((Key::Cloud, self.cloud.as_slice())))
            .chain(gpus)
    }
}
