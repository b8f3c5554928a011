//! A forward-only cursor over JSON bytes, for the one response that is large: Nova's server pages
//! (100,000 servers, fifty-odd keys each, nearly all ignored). serde_json reading typed values
//! checks and compares every key; this cursor finds the few keys the meter reads and skips the
//! rest by structure, jumping through strings eight bytes at a time.
//!
//! Skipped values are checked for structure (strings closed, brackets matched, only the bytes of
//! numbers and `true`/`false`/`null` between them) but not for every rule of JSON: a skipped string
//! is not checked for UTF-8 or control characters, and a skipped scalar's letters are not checked
//! for order. Values that are kept are fully checked (UTF-8, escapes through serde_json). Errors
//! name the line and column.

use std::fmt;

/// Where and why the bytes are not what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for ScanError {}

/// Nesting deeper than this is refused rather than tracked (Nova's is below 10).
const MAX_DEPTH: u32 = 64;

/// What one byte can be between strings inside a skipped value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Not allowed there.
    Bad,
    /// Whitespace, `,`, `:`, and the bytes of numbers and literals.
    Plain,
    Quote,
    Open,
    Close,
}

const CLASSES: [Class; 256] = {
    let mut table = [Class::Bad; 256];
    let plain = b" \t\r\n,:0123456789-+.eEtrufalsn";
    let mut i = 0;
    while i < plain.len() {
        table[plain[i] as usize] = Class::Plain;
        i += 1;
    }
    table[b'"' as usize] = Class::Quote;
    table[b'{' as usize] = Class::Open;
    table[b'[' as usize] = Class::Open;
    table[b'}' as usize] = Class::Close;
    table[b']' as usize] = Class::Close;
    table
};

/// The first `"` or `\\` at or after `from`. Eight bytes at a time: most strings of a server are
/// shorter than a vector register, where `memchr`'s set-up costs more than the search.
#[inline(always)]
fn quote_or_backslash(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        // a byte equal to the needle is zero after the xor; the lowest flagged byte is exact
        let found = zero_byte(word ^ (ONES * u64::from(b'"')))
            | zero_byte(word ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i.min(bytes.len())..]
        .iter()
        .position(|b| matches!(b, b'"' | b'\\'))
        .map(|offset| i + offset)
}

/// A position in a JSON text.
#[derive(Debug)]
pub struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// A string's contents as they appear in the text, quotes excluded.
#[derive(Debug, Clone, Copy)]
pub struct RawString<'a> {
    pub bytes: &'a [u8],
    /// Whether it holds a `\` escape (and must be decoded).
    pub escaped: bool,
    /// Offset of the opening quote, for errors.
    at: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> ScanError {
        self.error_at(self.pos, message)
    }

    /// The current byte offset, for an error found later about what starts here.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// An error about what starts at byte `at`.
    pub fn error_at(&self, at: usize, message: impl Into<String>) -> ScanError {
        let before = &self.bytes[..at.min(self.bytes.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        ScanError {
            line,
            column: at - line_start + 1,
            message: message.into(),
        }
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte that is not whitespace, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.pos).copied()
    }

    /// Consumes `byte` (after whitespace) or fails naming `what` was expected.
    #[inline]
    pub fn expect(&mut self, byte: u8, what: &str) -> Result<(), ScanError> {
        match self.peek() {
            Some(found) if found == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(found) => {
                Err(self.error(format!("expected {what}, found {:?}", char::from(found))))
            }
            None => Err(self.error(format!("expected {what}, found the end"))),
        }
    }

    /// After the last value: only whitespace may follow.
    pub fn finish(&mut self) -> Result<(), ScanError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("trailing characters")),
        }
    }

    /// Consumes `null` if it comes next.
    pub fn null(&mut self) -> Result<bool, ScanError> {
        if self.peek() != Some(b'n') {
            return Ok(false);
        }
        if self.bytes[self.pos..].starts_with(b"null") {
            self.pos += 4;
            Ok(true)
        } else {
            Err(self.error("expected null"))
        }
    }

    /// Reads a string, returning its raw contents.
    #[inline]
    pub fn string(&mut self) -> Result<RawString<'a>, ScanError> {
        self.expect(b'"', "a string")?;
        self.string_after_quote()
    }

    /// The rest of a string whose opening quote was just consumed.
    #[inline(always)]
    fn string_after_quote(&mut self) -> Result<RawString<'a>, ScanError> {
        let at = self.pos - 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            let Some(end) = quote_or_backslash(self.bytes, self.pos) else {
                return Err(self.error_at(at, "unterminated string"));
            };
            self.pos = end;
            if self.bytes[self.pos] == b'"' {
                self.pos += 1;
                return Ok(RawString {
                    bytes: &self.bytes[start..self.pos - 1],
                    escaped,
                    at,
                });
            }
            // a backslash: the next byte is escaped, whatever it is
            escaped = true;
            self.pos += 2;
            if self.pos > self.bytes.len() {
                return Err(self.error_at(at, "unterminated string"));
            }
        }
    }

    /// Appends a string's decoded text to `out`.
    pub fn decode_into(&self, raw: RawString<'_>, out: &mut String) -> Result<(), ScanError> {
        if raw.escaped {
            let quoted = &self.bytes[raw.at..raw.at + raw.bytes.len() + 2];
            let text: String = serde_json::from_slice(quoted)
                .map_err(|err| self.error_at(raw.at, format!("bad string: {err}")))?;
            out.push_str(&text);
        } else {
            let text = std::str::from_utf8(raw.bytes)
                .map_err(|_| self.error_at(raw.at, "string is not UTF-8"))?;
            if text.bytes().any(|b| b < 0x20) {
                return Err(self.error_at(raw.at, "control character in string"));
            }
            out.push_str(text);
        }
        Ok(())
    }

    /// Skips one value of any kind, returning the text it spanned.
    pub fn skip_value(&mut self) -> Result<&'a [u8], ScanError> {
        let start = match self.peek() {
            Some(_) => self.pos,
            None => return Err(self.error("expected a value, found the end")),
        };
        match self.bytes[self.pos] {
            b'"' => {
                self.pos += 1;
                self.string_after_quote()?;
            }
            b'{' | b'[' => self.skip_container()?,
            _ => self.skip_scalar()?,
        }
        Ok(&self.bytes[start..self.pos])
    }

    fn skip_scalar(&mut self) -> Result<(), ScanError> {
        let start = self.pos;
        while let Some(&byte) = self.bytes.get(self.pos) {
            if !matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z') {
                break;
            }
            self.pos += 1;
        }
        let scalar = &self.bytes[start..self.pos];
        let literal = matches!(scalar, b"true" | b"false" | b"null");
        let number = scalar
            .first()
            .is_some_and(|b| b.is_ascii_digit() || *b == b'-')
            && scalar
                .iter()
                .all(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'));
        if literal || number {
            Ok(())
        } else {
            Err(self.error_at(start, "expected a value"))
        }
    }

    /// Skips an object or array by its brackets, jumping over strings.
    fn skip_container(&mut self) -> Result<(), ScanError> {
        // bit i of `objects` says whether nesting level i is an object (else an array)
        let (mut depth, mut objects) = (0u32, 0u64);
        loop {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.error("unterminated object or array"));
            };
            match CLASSES[byte as usize] {
                Class::Plain => self.pos += 1,
                Class::Quote => {
                    self.pos += 1;
                    self.string_after_quote()?;
                }
                Class::Open => {
                    if depth == MAX_DEPTH {
                        return Err(self.error("nested too deep"));
                    }
                    if byte == b'{' {
                        objects |= 1 << depth;
                    } else {
                        objects &= !(1 << depth);
                    }
                    depth += 1;
                    self.pos += 1;
                }
                Class::Close => {
                    let object = depth > 0 && objects & (1 << (depth - 1)) != 0;
                    if depth == 0 || (byte == b'}') != object {
                        return Err(self.error(format!("unexpected {:?}", char::from(byte))));
                    }
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Class::Bad => {
                    return Err(self.error(format!("unexpected {:?}", char::from(byte))));
                }
            }
        }
    }

    /// Walks an object's members: `member` is called with each key (raw) and must consume its
    /// value.
    pub fn object(
        &mut self,
        what: &str,
        mut member: impl FnMut(&mut Self, RawString<'a>) -> Result<(), ScanError>,
    ) -> Result<(), ScanError> {
        self.expect(b'{', what)?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let key = self.string()?;
            self.expect(b':', "':'")?;
            member(self, key)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error(format!("expected ',' or '}}' in {what}"))),
            }
        }
    }

    /// Walks an array's elements: `element` must consume each.
    pub fn array(
        &mut self,
        what: &str,
        mut element: impl FnMut(&mut Self) -> Result<(), ScanError>,
    ) -> Result<(), ScanError> {
        self.expect(b'[', what)?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            element(self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error(format!("expected ',' or ']' in {what}"))),
            }
        }
    }
}

impl<'a> Scanner<'a> {
    /// A member's key as bytes to compare with plain names: as written, or decoded where it holds
    /// an escape (`"\u0069d"` is `id`, as serde_json reads it).
    #[inline]
    pub fn key(&self, raw: RawString<'a>) -> Result<std::borrow::Cow<'a, [u8]>, ScanError> {
        if !raw.escaped {
            return Ok(std::borrow::Cow::Borrowed(raw.bytes));
        }
        let mut text = String::new();
        self.decode_into(raw, &mut text)?;
        Ok(std::borrow::Cow::Owned(text.into_bytes()))
    }
}

#[cfg(test)]
mod tests;
