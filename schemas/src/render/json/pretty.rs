//! Pretty JSON written straight into a byte buffer, indented as cloud-info-provider prints it.

use super::*;

/// Writes `object` as serde_json's pretty printer does at `indent` levels deep, without going
/// through serde for the strings: most need no escaping, and checking that a whole string needs
/// none and copying it is several times quicker than serde_json's byte-by-byte escaping (a large
/// site has a million strings). Strings that need escaping, and numbers, still go through
/// serde_json, so every byte is serde_json's.
pub(super) fn write_object(out: &mut Vec<u8>, indent: usize, object: &Object) {
    let entity = object.entity;
    let inner = indent + 1;
    out.push(b'{');
    object_key(out, inner, true, "ID");
    string(out, &entity.id);
    for (name, value) in &entity.attributes {
        object_key(out, inner, false, name);
        match value {
            Value::Text(text) if listed(entity.class, name) => {
                out.push(b'[');
                new_line(out, inner + 1, true);
                string(out, text);
                new_line(out, inner, true);
                out.push(b']');
            }
            Value::Text(text) => string(out, text),
            Value::List(items) if !items.is_empty() => {
                out.push(b'[');
                for (position, item) in items.iter().enumerate() {
                    new_line(out, inner + 1, position == 0);
                    string(out, item);
                }
                new_line(out, inner, true);
                out.push(b']');
            }
            other => write_json(out, inner, &Attribute(other)),
        }
    }
    object_key(out, inner, false, "CreationTime");
    string(out, &object.stamp.creation_time);
    object_key(out, inner, false, "Validity");
    write_json(out, inner, &object.stamp.validity);
    object_key(out, inner, false, "OtherInfo");
    write_json(out, inner, &OtherInfo(&entity.other_info));
    object_key(out, inner, false, "Associations");
    let associations = association_entries(entity, object.endpoints);
    if associations.is_empty() {
        out.extend_from_slice(b"{}");
    } else {
        out.push(b'{');
        for (position, (name, targets)) in associations.iter().enumerate() {
            object_key(out, inner + 1, position == 0, name);
            out.push(b'[');
            for (position, target) in targets.iter().enumerate() {
                new_line(out, inner + 2, position == 0);
                string(out, target);
            }
            new_line(out, inner + 1, true);
            out.push(b']');
        }
        new_line(out, inner, true);
        out.push(b'}');
    }
    new_line(out, indent, true);
    out.push(b'}');
}

/// A line break (after a comma unless `first`) and the indentation of `indent` levels.
pub(super) fn new_line(out: &mut Vec<u8>, indent: usize, first: bool) {
    out.extend_from_slice(if first { b"\n" } else { b",\n" });
    for _ in 0..indent {
        out.extend_from_slice(b"  ");
    }
}

/// An object key on its own line, and the `": "` after it.
pub(super) fn object_key(out: &mut Vec<u8>, indent: usize, first: bool, name: &str) {
    new_line(out, indent, first);
    string(out, name);
    out.extend_from_slice(b": ");
}

/// A JSON string: copied as is when nothing in it needs escaping (control characters, quotes and
/// backslashes: what serde_json escapes), else written by serde_json.
pub(super) fn string(out: &mut Vec<u8>, text: &str) {
    // Checked without an early exit, so many bytes are looked at at once.
    let plain = text.bytes().fold(true, |plain, byte| {
        plain & (byte >= 0x20) & (byte != b'"') & (byte != b'\\')
    });
    if plain {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        write_json(out, 0, text);
    }
}

/// Writes `value` pretty-printed as if it sat `indent` levels deep.
pub(super) fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, indent: usize, value: &T) {
    let mut serializer = serde_json::Serializer::with_formatter(out, Pretty::at(indent));
    // Writing into a Vec cannot fail, and every value serializes.
    let _ = value.serialize(&mut serializer);
}

/// serde_json's pretty printing (two spaces a level, `": "` after keys, empty arrays and objects as
/// `[]` and `{}`), starting at any depth, so the elements of one list can be written apart and
/// joined.
pub(super) struct Pretty {
    indent: usize,
    has_value: bool,
}

impl Pretty {
    pub(super) fn at(indent: usize) -> Self {
        Self {
            indent,
            has_value: false,
        }
    }

    pub(super) fn new_line<W: ?Sized + std::io::Write>(
        &self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        writer.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(writer)
    }

    pub(super) fn indent<W: ?Sized + std::io::Write>(&self, writer: &mut W) -> std::io::Result<()> {
        for _ in 0..self.indent {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }

    pub(super) fn open<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    pub(super) fn close<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            writer.write_all(b"\n")?;
            self.indent(writer)?;
        }
        writer.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.new_line(writer, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        _writer: &mut W,
    ) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.new_line(writer, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        _writer: &mut W,
    ) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
