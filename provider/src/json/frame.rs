//! Reading a large JSON document one value at a time at `from_slice` speed (Slurm's job lists).
//!
//! `serde_json::from_reader` pulls its input a byte at a time through `Read`, about ten times
//! slower than `from_slice` on the same bytes. [`Framer`] keeps a window of the input (1 MiB, more
//! only when one value is larger) and parses each value (a key, the `meta` block, one job) with
//! `from_slice` over the window; a value cut by the window's end is parsed again once more input
//! is in. The structure around the values (`{`, `:`, `,`, `[`) is read by hand. So memory is the
//! window, whatever the document's size, and the speed is serde_json's best.

use std::io::Read;

use serde::de::DeserializeOwned;

/// What stopped the reading.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("cannot read the output: {0}")]
    Read(#[from] std::io::Error),
    #[error("unreadable JSON at byte {at}: {message}")]
    Syntax { at: u64, message: String },
}

const WINDOW: usize = 1 << 20;
/// The least free space a read is given.
const MIN_READ: usize = 1 << 16;
/// How much input [`Framer::value_ahead`] wants in the window before it parses: more than a job,
/// so jobs are seldom cut by the window's end and parsed twice.
pub const AHEAD: usize = 1 << 18;

/// A window over the input.
pub struct Framer<R> {
    reader: R,
    /// The window; `buffer[..end]` holds input.
    buffer: Vec<u8>,
    end: usize,
    /// Next unread byte of `buffer`.
    position: usize,
    /// Where `buffer[0]` is in the document.
    offset: u64,
    eof: bool,
}

impl<R: Read> Framer<R> {
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buffer: vec![0; WINDOW],
            end: 0,
            position: 0,
            offset: 0,
            eof: false,
        }
    }

    /// Where the next unread byte is in the document.
    pub fn at(&self) -> u64 {
        self.offset + self.position as u64
    }

    fn syntax(&self, message: impl Into<String>) -> FrameError {
        FrameError::Syntax {
            at: self.at(),
            message: message.into(),
        }
    }

    /// Moves the unread bytes to the front and reads once more after them (growing the window
    /// when one value fills it). One read, not a full window: a command that prints its `meta`
    /// block and then hangs must be answered at once.
    fn fill(&mut self) -> Result<(), FrameError> {
        // Compact only when the tail is short, so unread bytes are not copied on every read.
        if self.buffer.len() - self.end < MIN_READ && self.position > 0 {
            self.buffer.copy_within(self.position..self.end, 0);
            self.end -= self.position;
            self.offset += self.position as u64;
            self.position = 0;
        }
        if self.buffer.len() - self.end < MIN_READ {
            let larger = (2 * self.buffer.len()).max(WINDOW);
            self.buffer.resize(larger, 0);
        }
        let read = loop {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        let n = read?;
        self.eof = n == 0;
        self.end += n;
        Ok(())
    }

    /// The next byte that is not whitespace, without consuming it; `None` at the end.
    pub fn peek(&mut self) -> Result<Option<u8>, FrameError> {
        loop {
            while let Some(&byte) = self.buffer[..self.end].get(self.position) {
                if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                    return Ok(Some(byte));
                }
                self.position += 1;
            }
            if self.eof {
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Consumes the next non-whitespace byte, which must be one of `expected`.
    pub fn next_of(&mut self, expected: &[u8], what: &str) -> Result<u8, FrameError> {
        match self.peek()? {
            Some(byte) if expected.contains(&byte) => {
                self.position += 1;
                Ok(byte)
            }
            Some(byte) => Err(self.syntax(format!("expected {what}, found {:?}", byte as char))),
            None => Err(self.syntax(format!("expected {what}, found the end of the output"))),
        }
    }

    /// Parses the next value as `T`, as soon as it is complete in the window.
    pub fn value<T: DeserializeOwned>(&mut self) -> Result<T, FrameError> {
        self.value_ahead(0)
    }

    /// Parses the next value as `T` once `ahead` bytes (or the rest of the input) are in the
    /// window. For the many values of a long list, where reading ahead costs nothing (the list
    /// is not done before its end anyway) and saves parsing cut values twice.
    pub fn value_ahead<T: DeserializeOwned>(&mut self, ahead: usize) -> Result<T, FrameError> {
        while self.end - self.position < ahead && !self.eof {
            self.fill()?;
        }
        loop {
            self.peek()?;
            let window = &self.buffer[self.position..self.end];
            let mut stream = serde_json::Deserializer::from_slice(window).into_iter::<T>();
            let parsed = stream.next();
            let end = stream.byte_offset();
            match parsed {
                // A value that ends with the window may be cut (a number): read on and parse again.
                Some(Ok(_)) if end == window.len() && !self.eof => self.fill()?,
                Some(Ok(value)) => {
                    self.position += end;
                    return Ok(value);
                }
                Some(Err(err)) if err.is_eof() && !self.eof => self.fill()?,
                Some(Err(err)) => {
                    let text = err.to_string();
                    // serde_json's line and column count from the window, not the document.
                    let message = text.split(" at line ").next().unwrap_or(&text).to_owned();
                    return Err(self.syntax(message));
                }
                None if !self.eof => self.fill()?,
                None => return Err(self.syntax("expected a value, found the end of the output")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `step` bytes at a time, so values straddle every refill.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(out.len()).min(self.bytes.len());
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn values_cut_by_the_window_are_read_whole() {
        // Larger than the window, in small pieces: every kind of value gets cut somewhere.
        let mut document = b"[".to_vec();
        for n in 0..40_000u64 {
            if n > 0 {
                document.push(b',');
            }
            document.extend_from_slice(
                format!("{{\"n\": {n}, \"s\": \"x\\\"y{n}\", \"f\": 12345.5, \"t\": true}}")
                    .as_bytes(),
            );
        }
        document.extend_from_slice(b"] 1234567");
        assert!(document.len() > WINDOW);
        let mut framer = Framer::new(Trickle {
            bytes: &document,
            step: 777,
        });
        framer.next_of(b"[", "[").unwrap();
        let mut count = 0u64;
        loop {
            let value: serde_json::Value = framer.value().unwrap();
            assert_eq!(value["n"], count);
            assert_eq!(value["s"], format!("x\"y{count}"));
            assert_eq!(value["f"], 12345.5);
            count += 1;
            if framer.next_of(b",]", "`,` or `]`").unwrap() == b']' {
                break;
            }
        }
        assert_eq!(count, 40_000);
        // A number at the very end is not cut short by a refill.
        assert_eq!(framer.value::<u64>().unwrap(), 1_234_567);
        assert_eq!(framer.peek().unwrap(), None);
        assert_eq!(
            framer.buffer.len(),
            WINDOW,
            "no value needed a larger window"
        );
    }

    #[test]
    fn a_value_larger_than_the_window_grows_it() {
        let big = "g".repeat(3 * WINDOW);
        let document = format!("[\"{big}\", 7]");
        let mut framer = Framer::new(Trickle {
            bytes: document.as_bytes(),
            step: 1 << 16,
        });
        framer.next_of(b"[", "[").unwrap();
        assert_eq!(framer.value::<String>().unwrap(), big);
        framer.next_of(b",", ",").unwrap();
        assert_eq!(framer.value::<u8>().unwrap(), 7);
        assert!(framer.buffer.len() >= 3 * WINDOW);
    }

    #[test]
    fn errors_say_where_in_the_document() {
        let document = b"[{\"a\": 1}, {\"a\": tru}]";
        let mut framer = Framer::new(&document[..]);
        framer.next_of(b"[", "[").unwrap();
        framer.value::<serde_json::Value>().unwrap();
        framer.next_of(b",", ",").unwrap();
        let err = framer.value::<serde_json::Value>().unwrap_err().to_string();
        assert_eq!(err, "unreadable JSON at byte 11: expected ident");
        let mut framer = Framer::new(&b"[{\"a\": 1"[..]);
        framer.next_of(b"[", "[").unwrap();
        let err = framer.value::<serde_json::Value>().unwrap_err().to_string();
        assert!(
            err.starts_with("unreadable JSON at byte 1: EOF while parsing"),
            "{err}"
        );
    }
}
