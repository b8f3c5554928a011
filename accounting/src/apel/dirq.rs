//! An outgoing message directory in python-dirq's `QueueSimple` layout, the queue `ssmsend` sends
//! from (facts of that layout, which `ssmsend` and our test read with the real `dirq` package):
//!
//! * intermediate directories named by time: 8 lower-case hex digits of the Unix time rounded down
//!   to the granularity (60 s);
//! * element files named by 14 lower-case hex digits: 8 of the seconds, 5 of the microseconds and
//!   one "random" digit (here from the process id), so names sort in the order they were added;
//! * an element is written to `<name>.tmp` (created exclusively), then hard-linked to a fresh
//!   final name and the temporary file removed: a reader never sees a partial element, and files
//!   ending in `.tmp` or `.lck` are not elements.
//!
//! We also fsync the element and its directory before returning, so a message reported as queued
//! survives a power cut.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::ApelError;

/// python-dirq's default granularity for intermediate directories, in seconds.
const GRANULARITY: u64 = 60;

/// An outgoing `QueueSimple` directory.
#[derive(Debug, Clone)]
pub struct DirqQueue {
    path: PathBuf,
    rndhex: u32,
}

impl DirqQueue {
    /// The queue at `path`, created if missing.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ApelError> {
        let path = path.into();
        fs::create_dir_all(&path).map_err(|source| ApelError::Queue {
            path: path.clone(),
            source,
        })?;
        Ok(Self {
            path,
            rndhex: std::process::id() % 16,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds one element; returns its name (`<directory>/<file>`, as dirq names elements).
    pub fn add(&self, data: &[u8]) -> Result<String, ApelError> {
        self.add_at(data).map_err(|source| ApelError::Queue {
            path: self.path.clone(),
            source,
        })
    }

    fn add_at(&self, data: &[u8]) -> io::Result<String> {
        let (secs, _) = now();
        let dir_name = format!("{:08x}", secs - secs % GRANULARITY);
        let dir = self.path.join(&dir_name);
        fs::create_dir_all(&dir)?;
        let (temporary, mut file) = loop {
            let temporary = dir.join(format!("{}.tmp", self.element_name()));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temporary)
            {
                Ok(file) => break (temporary, file),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(err),
            }
        };
        file.write_all(data)?;
        file.sync_all()?;
        drop(file);
        let name = loop {
            let name = self.element_name();
            match fs::hard_link(&temporary, dir.join(&name)) {
                Ok(()) => break name,
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(err),
            }
        };
        fs::remove_file(&temporary)?;
        File::open(&dir)?.sync_all()?;
        Ok(format!("{dir_name}/{name}"))
    }

    fn element_name(&self) -> String {
        let (secs, micros) = now();
        format!("{secs:08x}{micros:05x}{:01x}", self.rndhex)
    }
}

/// Seconds and microseconds since the Unix epoch.
fn now() -> (u64, u32) {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (since.as_secs(), since.subsec_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_named_and_placed_as_dirq_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let queue = DirqQueue::open(dir.path().join("outgoing")).unwrap();
        let mut names = Vec::new();
        for n in 0..20 {
            names.push(queue.add(format!("message {n}").as_bytes()).unwrap());
        }
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "names sort in the order added");
        for (n, name) in names.iter().enumerate() {
            let (directory, file) = name.split_once('/').unwrap();
            assert_eq!(directory.len(), 8);
            assert_eq!(file.len(), 14);
            assert!(name.bytes().all(|b| b == b'/' || b.is_ascii_hexdigit()));
            assert!(!name.bytes().any(|b| b.is_ascii_uppercase()));
            let secs = u64::from_str_radix(directory, 16).unwrap();
            assert_eq!(secs % GRANULARITY, 0);
            let text = fs::read_to_string(queue.path().join(name)).unwrap();
            assert_eq!(text, format!("message {n}"));
        }
        let leftovers: Vec<_> = walk(queue.path())
            .into_iter()
            .filter(|p| p.extension().is_some())
            .collect();
        assert!(leftovers.is_empty(), "no temporary files: {leftovers:?}");
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                found.extend(walk(&path));
            } else {
                found.push(path);
            }
        }
        found
    }
}
