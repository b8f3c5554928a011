//! Errors in `central.toml`, located as `file:line:column`.

use std::path::{Path, PathBuf};

use accelfed_schemas::excerpt::shorten_quotes;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CentralConfigError {
    #[error("{}: cannot read: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

impl CentralConfigError {
    /// A problem at byte `offset` of `source` (line and column 1-based; 0 when unknown).
    /// The file's text, or an error at the first byte that is not UTF-8 (TOML files are UTF-8);
    /// the line and column count the valid text before it.
    pub fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Self> {
        String::from_utf8(bytes).map_err(|err| {
            let bad = err.utf8_error().valid_up_to();
            let byte = err.as_bytes()[bad];
            let before = String::from_utf8_lossy(&err.as_bytes()[..bad]).into_owned();
            Self::at(
                path,
                &before,
                Some(bad),
                format!("byte 0x{byte:02x} is not UTF-8 (TOML files are UTF-8 text)"),
            )
        })
    }

    pub fn at(
        path: &Path,
        source: &str,
        offset: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        let (line, column) = match offset {
            Some(offset) => {
                let mut offset = offset.min(source.len());
                while !source.is_char_boundary(offset) {
                    offset -= 1;
                }
                let before = &source[..offset];
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                (
                    before.matches('\n').count() + 1,
                    before[line_start..].chars().count() + 1,
                )
            }
            None => (0, 0),
        };
        Self::Invalid {
            path: path.to_owned(),
            line,
            column,
            // serde and toml quote the value they refuse, whatever its size.
            message: shorten_quotes(&message.into()),
        }
    }

    /// A TOML parse or type error, with its position and without its multi-line excerpt.
    pub fn from_toml(path: &Path, source: &str, err: &toml::de::Error) -> Self {
        Self::at(
            path,
            source,
            err.span().map(|span| span.start),
            err.message().trim_end().to_owned(),
        )
    }
}
