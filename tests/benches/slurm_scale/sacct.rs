//! The generated `sacct --json` document: recorded jobs cut where their ids go, repeated to any
//! number of jobs and produced as it is read, so the benchmark's input costs no memory.

use super::*;

/// One recorded job, cut where its job id goes.
pub(crate) struct Template {
    pub(crate) pieces: Vec<Vec<u8>>,
}

/// A `sacct --json` document of `jobs` jobs, produced as it is read.
pub(crate) struct Sacct {
    pub(crate) header: Vec<u8>,
    pub(crate) footer: Vec<u8>,
    pub(crate) templates: Vec<Template>,
    pub(crate) jobs: u64,
    pub(crate) next: u64,
    pub(crate) buffer: Vec<u8>,
    pub(crate) position: usize,
    pub(crate) footer_done: bool,
    pub(crate) bytes: u64,
}

pub(crate) fn fixture() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../provider/tests/fixtures/slurm/v0.0.38/sacct.json"),
    )
    .unwrap()
}

/// The byte ranges of the elements of the document's `jobs` array.
pub(crate) fn job_ranges(document: &[u8]) -> (usize, Vec<(usize, usize)>, usize) {
    let key = document.windows(7).position(|w| w == b"\"jobs\":").unwrap();
    let open = key + document[key..].iter().position(|&b| b == b'[').unwrap();
    let mut ranges = Vec::new();
    let mut at = open + 1;
    loop {
        while document[at].is_ascii_whitespace() || document[at] == b',' {
            at += 1;
        }
        if document[at] == b']' {
            return (open + 1, ranges, at);
        }
        let mut stream =
            serde_json::Deserializer::from_slice(&document[at..]).into_iter::<IgnoredAny>();
        stream.next().unwrap().unwrap();
        let end = at + stream.byte_offset();
        ranges.push((at, end));
        at = end;
    }
}

/// Cuts a job's text at every `"job_id": <id>` whose id is one of `ids`.
pub(crate) fn template(text: &[u8], ids: &[&str]) -> Template {
    let mut pieces = Vec::new();
    let mut current = Vec::new();
    let mut at = 0;
    let key = b"\"job_id\": ";
    while at < text.len() {
        if text[at..].starts_with(key) {
            let digits_at = at + key.len();
            let digits = text[digits_at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let id = std::str::from_utf8(&text[digits_at..digits_at + digits]).unwrap();
            if digits > 0 && ids.contains(&id) {
                current.extend_from_slice(key);
                pieces.push(std::mem::take(&mut current));
                at = digits_at + digits;
                continue;
            }
        }
        current.push(text[at]);
        at += 1;
    }
    pieces.push(current);
    Template { pieces }
}

impl Sacct {
    pub(crate) fn new(jobs: u64) -> Self {
        let document = fixture();
        let (start, ranges, end) = job_ranges(&document);
        // Jobs 1 and 2 (one step each), 3 and 4 (array tasks of array 3, two steps each).
        let ids: [&[&str]; 4] = [&["1"], &["2"], &["3"], &["3", "4"]];
        let templates = ranges
            .iter()
            .zip(ids)
            .map(|((from, to), ids)| template(&document[*from..*to], ids))
            .collect();
        Self {
            header: document[..start].to_vec(),
            footer: document[end..].to_vec(),
            templates,
            jobs,
            next: 0,
            buffer: Vec::with_capacity(1 << 16),
            position: 0,
            footer_done: false,
            bytes: 0,
        }
    }

    fn refill(&mut self) {
        self.buffer.clear();
        self.position = 0;
        if self.next == 0 && self.bytes == 0 {
            self.buffer.extend_from_slice(&self.header);
        }
        // A batch of jobs per refill keeps the generator cheap next to the parser.
        while self.next < self.jobs && self.buffer.len() < (1 << 16) {
            if self.next > 0 {
                self.buffer.extend_from_slice(b",\n    ");
            } else {
                self.buffer.extend_from_slice(b"\n    ");
            }
            let template = &self.templates[(self.next % self.templates.len() as u64) as usize];
            let id = (1_000_000 + self.next).to_string();
            for (index, piece) in template.pieces.iter().enumerate() {
                if index > 0 {
                    self.buffer.extend_from_slice(id.as_bytes());
                }
                self.buffer.extend_from_slice(piece);
            }
            self.next += 1;
        }
        if self.next == self.jobs && !self.footer_done && self.buffer.len() < (1 << 16) {
            self.buffer.extend_from_slice(b"\n  ");
            self.buffer.extend_from_slice(&self.footer);
            self.footer_done = true;
        }
    }
}

impl Read for Sacct {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.position == self.buffer.len() {
            self.refill();
        }
        let n = out.len().min(self.buffer.len() - self.position);
        out[..n].copy_from_slice(&self.buffer[self.position..self.position + n]);
        self.position += n;
        self.bytes += n as u64;
        Ok(n)
    }
}
