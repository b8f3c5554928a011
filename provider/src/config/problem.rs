//! One thing wrong with a backend's table, found after parsing (an id used twice, a reference that
//! resolves nowhere): the field path and the span of the offending value, so the error still
//! names `file:line:column` like a parse error does. Every backend's `validate` returns it.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::ConfigError;

/// One thing wrong with a table of the configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub span: Option<Range<usize>>,
    /// The field path inside the table, e.g. `batch[0].node_type[1].gpu[0].used`.
    pub field: String,
    pub message: String,
}

impl Problem {
    /// A problem with the value `at`. A value serde filled in from a default has the empty span
    /// `0..0`, which is nowhere in the file, so it is left unlocated rather than put at `1:1`.
    pub fn new<T>(at: &Spanned<T>, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            span: Some(at.span()).filter(|span| !span.is_empty()),
            field: field.into(),
            message: message.into(),
        }
    }

    /// Locates the problem in the file it came from; `prefix` is the table's own path.
    pub fn into_config_error(self, path: &Path, source: &str, prefix: &str) -> ConfigError {
        ConfigError::at(
            path,
            source,
            self.span,
            format!("{prefix}.{}: {}", self.field, self.message),
        )
    }
}
