//! Standard output, as a BDII expects from a provider script: the document and nothing else. Logs
//! never come here (tracing writes to standard error), so the output can be piped into `ldapadd`.

use std::io::Write;

use crate::PublishError;

/// Writes the whole document and flushes; a closed pipe is an error the caller reports.
pub fn write(document: &[u8]) -> Result<(), PublishError> {
    let mut out = std::io::stdout().lock();
    out.write_all(document)
        .and_then(|()| out.flush())
        .map_err(PublishError::Stdout)
}
