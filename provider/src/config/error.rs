//! Configuration errors, located as `file:line:column`.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use accelfed_schemas::excerpt::shorten_quotes;

/// A configuration that cannot be used. Displayed as `file:line:column: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{location}: {message}")]
    Invalid { location: Location, message: String },
}

/// Where in a file something is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    /// 1-based; 0 when the position is unknown.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.path.display())
        } else {
            write!(f, "{}:{}:{}", self.path.display(), self.line, self.column)
        }
    }
}

impl Location {
    /// The location of byte `offset` in `source`.
    pub fn at(path: &Path, source: &str, offset: usize) -> Self {
        // `str::floor_char_boundary` is newer than the workspace's rust-version (1.88).
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |index| index + 1);
        let column = before[line_start..].chars().count() + 1;
        Self {
            path: path.to_owned(),
            line,
            column,
        }
    }
}

impl ConfigError {
    /// A problem at a byte span of the file.
    pub fn at(
        path: &Path,
        source: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        let location = match span {
            Some(span) => Location::at(path, source, span.start),
            None => Location {
                path: path.to_owned(),
                line: 0,
                column: 0,
            },
        };
        ConfigError::Invalid {
            location,
            // serde and toml quote the value they refuse, whatever its size.
            message: shorten_quotes(&message.into()),
        }
    }

    /// The file's text, or an error at the first byte that is not UTF-8 (TOML files are UTF-8).
    /// The line and column count what precedes that byte, which is valid text.
    pub fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Self> {
        String::from_utf8(bytes).map_err(|err| {
            let bad = err.utf8_error().valid_up_to();
            let bytes = err.into_bytes();
            let before = String::from_utf8_lossy(&bytes[..bad]);
            let byte = bytes[bad];
            Self::at(
                path,
                &before,
                Some(bad..bad + 1),
                format!("byte 0x{byte:02x} is not UTF-8 (TOML files are UTF-8 text)"),
            )
        })
    }

    /// Converts a TOML parse error, keeping its position but not its multi-line excerpt.
    pub fn from_toml(path: &Path, source: &str, err: &toml::de::Error) -> Self {
        Self::at(
            path,
            source,
            err.span(),
            err.message().trim_end().to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based_lines_and_character_columns() {
        let source = "a = 1\nbé = 2\n";
        let offset = source.find('2').unwrap();
        let location = Location::at(Path::new("site.toml"), source, offset);
        assert_eq!(location.to_string(), "site.toml:2:6");
    }
}
