//! One page of a list, read item by item. Pure.
//!
//! A page is `{"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": ...}, "items": [...]}`.
//! [`read_page`] streams `items`: each item is deserialized into the lean types of [`super::api`]
//! (borrowing from the page's text), handed to `read`, and dropped before the next one is read, so
//! a page never costs more than its text plus what is kept. No `Vec` of a page's items is built:
//! at 500 pods a page such a vector is larger than 64 KB, and freeing one per page makes glibc's
//! allocator consolidate its free lists, which cost more than the parse itself.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::api::{ListMeta, Str};

/// Reads one page's text, adding what `read` makes of each item to `kept`; returns the continue
/// token, `None` on the last page. The client's listing runs exactly this, and so does the
/// benchmark.
pub fn read_page<'de, T, U>(
    text: &'de str,
    read: &mut impl FnMut(T, &mut Vec<String>) -> Option<U>,
    kept: &mut Vec<U>,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, serde_json::Error>
where
    T: Deserialize<'de>,
{
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let token = deserializer.deserialize_map(PageVisitor(ItemsSeed {
        read,
        kept,
        warnings,
        item: PhantomData,
    }))?;
    deserializer.end()?;
    Ok(token.filter(|token| !token.is_empty()))
}

/// The page object: its `metadata` gives the continue token, its `items` go to the seed.
struct PageVisitor<'r, T, U, F>(ItemsSeed<'r, T, U, F>);

impl<'de, T, U, F> Visitor<'de> for PageVisitor<'_, T, U, F>
where
    T: Deserialize<'de>,
    F: FnMut(T, &mut Vec<String>) -> Option<U>,
{
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes list (an object with metadata and items)")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut token = None;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key {
                "metadata" => {
                    token = map
                        .next_value::<Option<ListMeta>>()?
                        .and_then(|meta| meta.continue_token);
                }
                "items" => map.next_value_seed(self.0.reborrow())?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(token)
    }
}

/// The `items` array: each item is read, handed to `read` and dropped.
struct ItemsSeed<'r, T, U, F> {
    read: &'r mut F,
    kept: &'r mut Vec<U>,
    warnings: &'r mut Vec<String>,
    item: PhantomData<fn() -> T>,
}

impl<T, U, F> ItemsSeed<'_, T, U, F> {
    /// The same destinations, borrowed again (a page could name `items` twice).
    fn reborrow(&mut self) -> ItemsSeed<'_, T, U, F> {
        ItemsSeed {
            read: &mut *self.read,
            kept: &mut *self.kept,
            warnings: &mut *self.warnings,
            item: PhantomData,
        }
    }
}

impl<'de, T, U, F> DeserializeSeed<'de> for ItemsSeed<'_, T, U, F>
where
    T: Deserialize<'de>,
    F: FnMut(T, &mut Vec<String>) -> Option<U>,
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, T, U, F> Visitor<'de> for ItemsSeed<'_, T, U, F>
where
    T: Deserialize<'de>,
    F: FnMut(T, &mut Vec<String>) -> Option<U>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of items")
    }

    /// `"items": null`, as the API writes an empty list in some versions.
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<T>()? {
            if let Some(kept) = (self.read)(item, self.warnings) {
                self.kept.push(kept);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubernetes::api::Namespace;

    fn names(text: &str) -> Result<(Vec<String>, Option<String>), serde_json::Error> {
        let mut kept = Vec::new();
        let token = read_page(
            text,
            &mut |ns: Namespace, _: &mut Vec<String>| Some(ns.metadata.name),
            &mut kept,
            &mut Vec::new(),
        )?;
        Ok((kept, token))
    }

    #[test]
    fn items_are_read_and_the_continue_token_returned() {
        let page = r#"{"kind":"NamespaceList","apiVersion":"v1",
            "metadata":{"resourceVersion":"5","continue":"abc","remainingItemCount":3},
            "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#;
        assert_eq!(
            names(page).unwrap(),
            (vec!["a".to_owned(), "b".to_owned()], Some("abc".to_owned()))
        );
        // Items before metadata, an empty token on the last page, null items.
        let last = r#"{"items":[{"metadata":{"name":"c"}}],"metadata":{"continue":""}}"#;
        assert_eq!(names(last).unwrap(), (vec!["c".to_owned()], None));
        let empty = r#"{"kind":"NamespaceList","metadata":{},"items":null}"#;
        assert_eq!(names(empty).unwrap(), (Vec::new(), None));
    }

    #[test]
    fn a_page_that_is_not_a_list_is_an_error() {
        for text in [
            r#"{"items":{"a":1}}"#,
            r#"[1,2]"#,
            r#"{"items":[]} trailing"#,
            r#"{"items":[{"metadata":{"name":1}}]}"#,
        ] {
            assert!(names(text).is_err(), "{text} was accepted");
        }
    }
}
