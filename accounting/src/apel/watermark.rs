//! The APEL export's watermark: the highest spool version already delivered, in a one-line text
//! file. Written to a temporary file, synced and renamed over the old one, so a crash leaves the
//! old value or the new one. A missing file means nothing was exported yet.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::ApelError;

#[derive(Debug, Clone)]
pub struct Watermark {
    path: PathBuf,
}

impl Watermark {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored version; 0 when the file does not exist.
    pub fn read(&self) -> Result<i64, ApelError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(err) => return Err(self.error(err.to_string())),
        };
        text.trim()
            .parse::<i64>()
            .ok()
            .filter(|version| *version >= 0)
            .ok_or_else(|| {
                self.error(format!(
                    "holds {:?}, not a spool version (delete it to export everything again)",
                    text.trim()
                ))
            })
    }

    /// Stores `version` durably.
    pub fn write(&self, version: i64) -> Result<(), ApelError> {
        let mut temporary = self.path.clone().into_os_string();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        let written = (|| {
            let mut file = File::create(&temporary)?;
            writeln!(file, "{version}")?;
            file.sync_all()?;
            fs::rename(&temporary, &self.path)?;
            if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
                File::open(parent)?.sync_all()?;
            }
            Ok::<(), std::io::Error>(())
        })();
        written.map_err(|err| self.error(err.to_string()))
    }

    fn error(&self, message: String) -> ApelError {
        ApelError::Watermark {
            path: self.path.clone(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_zero_written_reads_back_and_garbage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let watermark = Watermark::new(dir.path().join("apel.watermark"));
        assert_eq!(watermark.read().unwrap(), 0);
        watermark.write(42).unwrap();
        assert_eq!(watermark.read().unwrap(), 42);
        fs::write(watermark.path(), "forty-two\n").unwrap();
        let err = watermark.read().unwrap_err().to_string();
        assert!(
            err.contains("apel.watermark") && err.contains("forty-two"),
            "{err}"
        );
    }
}
