//! A small indenting XML writer: the bytes quick-xml's `Writer::new_with_indent(_, b' ', 2)` gives
//! for the events the rendering uses, written straight into a buffer.
//!
//! quick-xml builds an event per tag and per text, and that bookkeeping cost more than the bytes
//! for a large site (half a million elements). The layout rules are quick-xml's: a tag starts on a
//! new line indented two spaces per level, except an end tag right after text; text stays on the
//! line of its element. Escaping is quick-xml's own [`escape`] (`<`, `>`, `&`, `'`, `"`).

use quick_xml::escape::escape;

/// Spaces per nesting level.
const INDENT: usize = 2;

#[derive(Debug, Default)]
pub struct XmlWriter {
    out: Vec<u8>,
    depth: usize,
    /// Whether the next tag goes on a new line (false only right after text).
    line_break: bool,
}

impl XmlWriter {
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            out: Vec::with_capacity(bytes),
            ..Self::default()
        }
    }

    /// A writer for elements that go at `depth` inside a document another writer holds, each on a
    /// new line (see [`XmlWriter::append`]).
    pub fn nested(depth: usize, bytes: usize) -> Self {
        Self {
            out: Vec::with_capacity(bytes),
            depth,
            line_break: true,
        }
    }

    /// How deep the next element goes.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Appends what a [`XmlWriter::nested`] writer at this writer's depth wrote, after a tag (never
    /// right after text).
    pub fn append(&mut self, piece: &[u8]) {
        self.out.extend_from_slice(piece);
        self.line_break = true;
    }

    /// `<?xml version="1.0" encoding="UTF-8"?>`.
    pub fn declaration(&mut self) {
        self.new_line();
        self.out
            .extend_from_slice(br#"<?xml version="1.0" encoding="UTF-8"?>"#);
        self.line_break = true;
    }

    /// `<name key="value" ...>`, values escaped.
    pub fn start(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.new_line();
        self.out.push(b'<');
        self.out.extend_from_slice(name.as_bytes());
        for (key, value) in attributes {
            self.out.push(b' ');
            self.out.extend_from_slice(key.as_bytes());
            self.out.extend_from_slice(b"=\"");
            self.escaped(value);
            self.out.push(b'"');
        }
        self.out.push(b'>');
        self.depth += 1;
        self.line_break = true;
    }

    /// `</name>`.
    pub fn end(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.new_line();
        self.out.extend_from_slice(b"</");
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'>');
        self.line_break = true;
    }

    /// `<name>value</name>` on one line, the value escaped.
    pub fn text_element(&mut self, name: &str, value: &str) {
        self.start(name, &[]);
        self.escaped(value);
        self.line_break = false;
        self.end(name);
    }

    pub fn finish(self) -> Vec<u8> {
        self.out
    }

    fn new_line(&mut self) {
        if self.line_break {
            self.out.push(b'\n');
            let indented = self.out.len() + self.depth * INDENT;
            self.out.resize(indented, b' ');
        }
    }

    fn escaped(&mut self, value: &str) {
        // Checked without an early exit, so many bytes are looked at at once; values that need
        // escaping are rare.
        let special = value.bytes().fold(false, |special, byte| {
            special | matches!(byte, b'<' | b'>' | b'&' | b'\'' | b'"')
        });
        if special {
            self.out.extend_from_slice(escape(value).as_bytes());
        } else {
            self.out.extend_from_slice(value.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quick_xml::Writer;
    use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

    /// The same small document through quick-xml and through [`XmlWriter`].
    #[test]
    fn writes_what_quick_xml_writes() {
        let mut theirs = Writer::new_with_indent(Vec::new(), b' ', 2);
        let mut mine = XmlWriter::default();
        theirs
            .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
            .expect("in memory");
        mine.declaration();
        let start = BytesStart::new("Root").with_attributes([("a", "x<\"y\"&'z'>"), ("b", "")]);
        theirs.write_event(Event::Start(start)).expect("in memory");
        mine.start("Root", &[("a", "x<\"y\"&'z'>"), ("b", "")]);
        for (name, value) in [("ID", "urn:a"), ("Empty", ""), ("Odd", "a<b & 'c' > \"d\"")] {
            theirs
                .create_element(name)
                .write_text_content(BytesText::new(value))
                .expect("in memory");
            mine.text_element(name, value);
        }
        theirs
            .write_event(Event::Start(BytesStart::new("Inner")))
            .expect("in memory");
        mine.start("Inner", &[]);
        theirs
            .create_element("Deep")
            .write_text_content(BytesText::new("ü"))
            .expect("in memory");
        mine.text_element("Deep", "ü");
        for name in ["Inner", "Root"] {
            theirs
                .write_event(Event::End(BytesEnd::new(name)))
                .expect("in memory");
            mine.end(name);
        }
        let theirs = String::from_utf8(theirs.into_inner()).expect("UTF-8");
        let mine = String::from_utf8(mine.finish()).expect("UTF-8");
        assert_eq!(mine, theirs);
    }
}
