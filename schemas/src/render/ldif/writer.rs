//! RFC 2849 output: one record per entry, `attr: value` for SAFE-STRINGs, `attr:: base64` for
//! everything else, lines folded at 76 characters.
//!
//! Everything written is ASCII (non-ASCII values go out as base64), so folding by bytes can never
//! split a character. Empty values are never written: GLUE2 has no meaning for them and slapd
//! refuses most of them, so the attribute is left out instead.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::glue::entity::Value;

use super::entry::{self, EntryOut};

/// The longest line written; longer ones continue on the next line after one space.
pub const LINE_WIDTH: usize = 76;

/// Whether `value` may be written as is (RFC 2849 SAFE-STRING), rather than base64-encoded.
///
/// On top of the grammar, a value ending in a space is encoded too (the RFC says it SHOULD be: many
/// tools strip trailing white space).
pub fn is_safe_string(value: &str) -> bool {
    let bytes = value.as_bytes();
    let Some(&first) = bytes.first() else {
        return true;
    };
    let safe_char =
        |byte: u8| byte.is_ascii() & (byte != b'\0') & (byte != b'\n') & (byte != b'\r');
    let safe_init = safe_char(first) && !matches!(first, b' ' | b':' | b'<');
    // A fold without an early exit: the compiler checks many bytes at once (30 MB of values).
    let all_safe = bytes
        .iter()
        .fold(true, |safe, &byte| safe & safe_char(byte));
    safe_init && all_safe && bytes.last() != Some(&b' ')
}

/// Builds an LDIF document entry by entry.
#[derive(Debug, Default)]
pub struct LdifWriter {
    out: String,
    /// A line too long to stay on one, before folding; kept to reuse its allocation.
    line: String,
    /// Whether this writer's records follow records written elsewhere (a piece of a document
    /// rendered on another thread), so its first record needs the separating empty line too.
    follows: bool,
}

impl LdifWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer with room for `bytes` of output, so a large document is not copied as it grows.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            out: String::with_capacity(bytes),
            ..Self::default()
        }
    }

    /// A writer for records that come after others (see [`LdifWriter::follows`]).
    pub fn following(bytes: usize) -> Self {
        Self {
            follows: true,
            ..Self::with_capacity(bytes)
        }
    }

    /// Starts a record. Records are separated by one empty line.
    pub fn dn(&mut self, dn: &str) {
        if !self.out.is_empty() || self.follows {
            self.out.push('\n');
        }
        self.line("dn", dn);
    }

    /// Writes `name: value`, or nothing when the value is empty.
    pub fn attribute(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.line(name, value);
        }
    }

    pub fn finish(self) -> Vec<u8> {
        self.out.into_bytes()
    }

    fn line(&mut self, name: &str, value: &str) {
        let start = self.out.len();
        self.out.push_str(name);
        if is_safe_string(value) {
            self.out.push_str(": ");
            self.out.push_str(value);
        } else {
            self.out.push_str(":: ");
            STANDARD.encode_string(value.as_bytes(), &mut self.out);
        }
        if self.out.len() - start <= LINE_WIDTH {
            self.out.push('\n');
        } else {
            // Most lines fit; the long ones (DNs) are moved aside and written back folded.
            self.line.clear();
            self.line.push_str(&self.out[start..]);
            self.out.truncate(start);
            push_folded(&mut self.out, &self.line);
        }
    }
}

/// Writes entries straight into LDIF for [`super::mapping::Mapping::apply_to`], keeping what it
/// needs to answer [`EntryOut::has`] and [`EntryOut::has_value`] for the entry being written.
#[derive(Debug, Default)]
pub struct EntryWriter<'a> {
    pub ldif: LdifWriter,
    /// The attributes the current entry has values of.
    names: Vec<&'a str>,
    /// Whether to keep the current entry's values too (its mapping asks [`EntryOut::has_value`]).
    record: bool,
    values: Vec<(&'a str, String)>,
    /// Room to format a number in.
    number: String,
}

impl<'a> EntryWriter<'a> {
    pub fn new(ldif: LdifWriter) -> Self {
        Self {
            ldif,
            ..Self::default()
        }
    }

    /// Starts an entry: its DN and object classes. `record`: keep its values for
    /// [`EntryOut::has_value`].
    pub fn begin(&mut self, dn: &str, object_classes: &[&str], record: bool) {
        self.names.clear();
        self.values.clear();
        self.record = record;
        self.ldif.dn(dn);
        for class in object_classes {
            self.ldif.attribute("objectClass", class);
        }
    }

    fn add(&mut self, name: &'a str, value: &str) {
        if value.is_empty() {
            return;
        }
        self.ldif.attribute(name, value);
        self.names.push(name);
        if self.record {
            self.values.push((name, value.to_owned()));
        }
    }
}

impl<'a> EntryOut<'a> for EntryWriter<'a> {
    fn add_str(&mut self, name: &'a str, value: &'a str) {
        self.add(name, value);
    }

    fn add_string(&mut self, name: &'a str, value: &str) {
        self.add(name, value);
    }

    fn add_value(&mut self, name: &'a str, value: &'a Value) {
        match value {
            Value::Text(text) => self.add(name, text),
            Value::List(items) => items.iter().for_each(|item| self.add(name, item)),
            other => {
                let mut number = std::mem::take(&mut self.number);
                number.clear();
                entry::push_text(&mut number, other);
                self.add(name, &number);
                self.number = number;
            }
        }
    }

    fn has(&self, name: &str) -> bool {
        self.names.contains(&name)
    }

    fn has_value(&self, name: &str, value: &str) -> bool {
        self.values.iter().any(|(n, v)| *n == name && v == value)
    }
}

/// Appends `line` (ASCII) and a newline, folded so no physical line exceeds [`LINE_WIDTH`].
fn push_folded(out: &mut String, line: &str) {
    let mut rest = line;
    let mut width = LINE_WIDTH;
    loop {
        // ASCII only, so every byte index is a character boundary.
        let cut = rest.len().min(width);
        let (head, tail) = rest.split_at(cut);
        out.push_str(head);
        out.push('\n');
        if tail.is_empty() {
            break;
        }
        out.push(' ');
        rest = tail;
        width = LINE_WIDTH - 1;
    }
}

/// Reverses folding and base64 (for tests): the records of an LDIF document as `(name, value)`
/// lists, the `dn` first.
#[cfg(test)]
pub fn parse(ldif: &[u8]) -> Vec<Vec<(String, String)>> {
    let text = std::str::from_utf8(ldif).expect("LDIF is ASCII");
    let unfolded = text.replace("\n ", "");
    unfolded
        .split("\n\n")
        .filter(|record| !record.trim().is_empty())
        .map(|record| {
            record
                .lines()
                .map(|line| {
                    if let Some((name, encoded)) = line.split_once(":: ") {
                        let bytes = STANDARD.decode(encoded).expect("valid base64");
                        (
                            name.to_owned(),
                            String::from_utf8(bytes).expect("UTF-8 value"),
                        )
                    } else {
                        let (name, value) = line.split_once(": ").expect("attr: value");
                        (name.to_owned(), value.to_owned())
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_is_safe() {
        for value in [
            "production",
            "urn:accelfed:S:share:a/b",
            "a b",
            "x<y",
            "x:y",
            "VO:atlas",
            "=",
            "#",
        ] {
            assert!(is_safe_string(value), "{value:?}");
        }
    }

    #[test]
    fn values_that_need_base64() {
        for value in [
            "Ünï", " lead", ":colon", "<url", "trail ", "a\nb", "a\rb", "a\0b",
        ] {
            assert!(!is_safe_string(value), "{value:?}");
        }
    }

    #[test]
    fn unsafe_values_are_base64_encoded_and_decode_back() {
        let mut writer = LdifWriter::new();
        writer.dn("GLUE2DomainID=Ünï,o=glue");
        writer.attribute("GLUE2EntityName", " padded ");
        writer.attribute("GLUE2DomainID", "plain");
        let ldif = writer.finish();
        let text = String::from_utf8(ldif.clone()).expect("valid in this test");
        assert!(text.starts_with("dn:: "), "{text}");
        assert!(text.contains("GLUE2EntityName:: IHBhZGRlZCA=\n"), "{text}");
        assert!(text.contains("GLUE2DomainID: plain\n"), "{text}");
        let records = parse(&ldif);
        assert_eq!(
            records[0][0],
            ("dn".into(), "GLUE2DomainID=Ünï,o=glue".into())
        );
        assert_eq!(records[0][1].1, " padded ");
    }

    #[test]
    fn empty_values_are_not_written() {
        let mut writer = LdifWriter::new();
        writer.dn("o=x");
        writer.attribute("description", "");
        assert_eq!(writer.finish(), b"dn: o=x\n");
    }

    #[test]
    fn long_lines_fold_at_76_and_unfold_to_the_original() {
        let value = "x".repeat(300);
        let mut writer = LdifWriter::new();
        writer.dn("o=x");
        writer.attribute("description", &value);
        writer.attribute("GLUE2EntityOtherInfo", &"é".repeat(100));
        let ldif = writer.finish();
        let text = String::from_utf8(ldif.clone()).expect("valid in this test");
        assert!(text.lines().all(|line| line.len() <= LINE_WIDTH), "{text}");
        assert!(text.lines().skip(2).any(|line| line.starts_with(' ')));
        let records = parse(&ldif);
        assert_eq!(records[0][1].1, value);
        assert_eq!(records[0][2].1, "é".repeat(100));
    }

    #[test]
    fn a_line_of_exactly_76_is_not_folded() {
        let mut out = String::new();
        push_folded(&mut out, &"y".repeat(LINE_WIDTH));
        assert_eq!(out.lines().count(), 1);
        out.clear();
        push_folded(&mut out, &"y".repeat(LINE_WIDTH + 1));
        assert_eq!(out, format!("{}\n y\n", "y".repeat(LINE_WIDTH)));
    }

    #[test]
    fn records_are_separated_by_one_empty_line() {
        let mut writer = LdifWriter::new();
        writer.dn("o=a");
        writer.attribute("o", "a");
        writer.dn("o=b");
        assert_eq!(writer.finish(), b"dn: o=a\no: a\n\ndn: o=b\n");
    }
}
