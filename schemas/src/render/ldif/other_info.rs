//! `OtherInfo` values of the GLUE 2.0 renderings (LDIF `GLUE2EntityOtherInfo`, XML `<OtherInfo>`):
//! `key=value` strings, sorted by key then value, without repeats.
//!
//! A large site has hundreds of thousands of them (every folded GPU fact is one), so each is built
//! once, in the form both formats write, and keeps where its key ends: the order is by (key, value),
//! which is not the order of the joined text (`a=1` sorts before `a.b=2` by key, after it as text).

use std::borrow::Borrow;
use std::cmp::Ordering;

use crate::glue::entity::Value;

use super::entry;

/// One `key=value` pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherInfo {
    text: String,
    key_len: usize,
}

impl OtherInfo {
    pub fn new(key: &str, value: &str) -> Self {
        Self::build(&[key], |text| text.push_str(value))
    }

    /// The pair whose key is `key` (its parts joined) and whose value is `value` as text (lists
    /// joined by `,`).
    pub fn from_value(key: &[&str], value: &Value) -> Self {
        Self::build(key, |text| entry::push_text(text, value))
    }

    /// The pair whose key is `key` (its parts joined) and whose value is `value`.
    pub fn from_parts(key: &[&str], value: &str) -> Self {
        Self::build(key, |text| text.push_str(value))
    }

    fn build(key: &[&str], value: impl FnOnce(&mut String)) -> Self {
        let mut text = String::with_capacity(64);
        key.iter().for_each(|part| text.push_str(part));
        let key_len = text.len();
        text.push('=');
        value(&mut text);
        Self { text, key_len }
    }

    pub fn key(&self) -> &str {
        &self.text[..self.key_len]
    }

    pub fn value(&self) -> &str {
        &self.text[self.key_len + 1..]
    }

    /// `key=value`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn into_string(self) -> String {
        self.text
    }
}

impl Ord for OtherInfo {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.key(), self.value()).cmp(&(other.key(), other.value()))
    }
}

impl PartialOrd for OtherInfo {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Puts `pairs` in output order: sorted by (key, value), without repeats and without pairs whose
/// key or value is empty (GLUE2 has no meaning for them).
/// `pairs` may hold the pairs or references to them.
pub fn normalize<P: Borrow<OtherInfo> + Ord>(pairs: &mut Vec<P>) {
    pairs.retain(|pair| {
        let pair = pair.borrow();
        !pair.key().is_empty() && !pair.value().is_empty()
    });
    pairs.sort_unstable();
    pairs.dedup();
}

/// The `OtherInfo` pairs of one entry, built in one reused buffer: a large site's entries have
/// hundreds of thousands of pairs between them (every folded GPU fact is one), and a `String` each
/// cost more than writing them. [`Pairs::normalize`] puts them in the order [`normalize`] gives.
#[derive(Debug, Default)]
pub struct Pairs {
    text: String,
    spans: Vec<Span>,
}

/// Where one pair lies in [`Pairs::text`]: `key` is `start..key_end`, `=` follows, the value runs to
/// `end`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    key_end: u32,
    end: u32,
}

impl Pairs {
    /// Empties the list, keeping its buffers.
    pub fn clear(&mut self) {
        self.text.clear();
        self.spans.clear();
    }

    pub fn push(&mut self, key: &str, value: &str) {
        self.build(&[key], |text| text.push_str(value));
    }

    /// The pair whose key is `key` (its parts joined) and whose value is `value`.
    pub fn push_parts(&mut self, key: &[&str], value: &str) {
        self.build(key, |text| text.push_str(value));
    }

    /// The pair whose key is `key` (its parts joined) and whose value is `value` as text (lists
    /// joined by `,`).
    pub fn push_value(&mut self, key: &[&str], value: &Value) {
        self.build(key, |text| entry::push_text(text, value));
    }

    fn build(&mut self, key: &[&str], value: impl FnOnce(&mut String)) {
        // Offsets are u32 to keep spans small; one entry's pairs never come near 4 GB.
        let offset = |text: &String| u32::try_from(text.len()).unwrap_or(u32::MAX);
        let start = offset(&self.text);
        key.iter().for_each(|part| self.text.push_str(part));
        let key_end = offset(&self.text);
        self.text.push('=');
        value(&mut self.text);
        let end = offset(&self.text);
        self.spans.push(Span {
            start,
            key_end,
            end,
        });
    }

    /// Sorts by (key, value) and drops repeats and pairs with an empty key or value, as
    /// [`normalize`] does.
    pub fn normalize(&mut self) {
        let text = self.text.as_str();
        let slice = |from: u32, to: u32| text.get(from as usize..to as usize).unwrap_or_default();
        let pair = |span: &Span| {
            (
                slice(span.start, span.key_end),
                slice(span.key_end + 1, span.end),
            )
        };
        self.spans
            .retain(|span| span.key_end > span.start && span.end > span.key_end + 1);
        // Stable sort: it finds runs already in order in one pass, and pairs mostly come in order
        // ([`super::gpu_info::fold`] writes each accelerator's facts sorted).
        self.spans.sort_by(|a, b| pair(a).cmp(&pair(b)));
        self.spans.dedup_by(|a, b| pair(a) == pair(b));
    }

    /// `key=value` of each pair, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.spans.iter().map(|span| {
            self.text
                .get(span.start as usize..span.end as usize)
                .unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_by_key_then_value_not_by_the_joined_text() {
        let mut pairs = vec![
            OtherInfo::new("a.b", "2"),
            OtherInfo::new("a", "1"),
            OtherInfo::new("a", "0"),
            OtherInfo::new("a", "1"),
            OtherInfo::new("", "x"),
            OtherInfo::new("y", ""),
        ];
        normalize(&mut pairs);
        let texts: Vec<&str> = pairs.iter().map(OtherInfo::as_str).collect();
        assert_eq!(texts, ["a=0", "a=1", "a.b=2"]);
    }

    #[test]
    fn keys_and_values_may_contain_the_separator() {
        let pair = OtherInfo::from_parts(&["GPU.", "x=y", ".ID"], "u=v");
        assert_eq!(pair.key(), "GPU.x=y.ID");
        assert_eq!(pair.value(), "u=v");
        assert_eq!(pair.as_str(), "GPU.x=y.ID=u=v");
    }

    #[test]
    fn pairs_normalize_as_owned_pairs_do() {
        let input = [
            ("a.b", "2"),
            ("a", "1"),
            ("a", "0"),
            ("a", "1"),
            ("", "x"),
            ("y", ""),
            ("a=", "0"),
            ("GPU.x=y.ID", "u=v"),
        ];
        let mut owned: Vec<OtherInfo> = input.iter().map(|(k, v)| OtherInfo::new(k, v)).collect();
        normalize(&mut owned);
        let mut pairs = Pairs::default();
        pairs.push("stale", "gone");
        pairs.clear();
        for (key, value) in input {
            pairs.push(key, value);
        }
        pairs.normalize();
        let expected: Vec<&str> = owned.iter().map(OtherInfo::as_str).collect();
        assert_eq!(pairs.iter().collect::<Vec<_>>(), expected);
    }
}
