//! HTTP/2 control frames bounded per connection. h2 answers every PING with a PING ACK and every
//! SETTINGS with a SETTINGS ACK, as RFC 9113 asks, without a limit of its own (its builder bounds
//! reset streams, headers and concurrent calls, not these): a client that sends nothing else cost
//! the service about a sixth of a core per connection (issue #30). Here the bytes a client sends on
//! an HTTP/2 port are read as frames (a 9-byte header, then a payload that is skipped), and PING and
//! SETTINGS frames that are not ACKs draw on a bucket of [`BURST`] refilled at [`PER_SECOND`]; a
//! connection that empties it is closed. A gRPC client sends one SETTINGS at the start and a
//! keep-alive PING every few seconds at most, far inside it.

use std::io;

use tokio::time::Instant;

/// Control frames a connection may send at once.
pub const BURST: f64 = 100.0;
/// Control frames a connection may send per second, sustained.
pub const PER_SECOND: f64 = 10.0;

/// The client connection preface, `PRI * HTTP/2.0...`, before the first frame (RFC 9113, 3.4).
const PREFACE_BYTES: usize = 24;
const FRAME_HEADER_BYTES: usize = 9;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const ACK: u8 = 0x1;

/// Reads the frames of one HTTP/2 connection as the server receives them.
#[derive(Debug)]
pub struct FrameMeter {
    preface_left: usize,
    header: [u8; FRAME_HEADER_BYTES],
    header_len: usize,
    payload_left: usize,
    tokens: f64,
    refilled: Instant,
}

impl Default for FrameMeter {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameMeter {
    pub fn new() -> Self {
        Self {
            preface_left: PREFACE_BYTES,
            header: [0; FRAME_HEADER_BYTES],
            header_len: 0,
            payload_left: 0,
            tokens: BURST,
            refilled: Instant::now(),
        }
    }

    /// Reads `bytes`, the next ones the client sent; an error once it sent control frames past
    /// the bound.
    pub fn observe(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            if self.preface_left > 0 {
                let n = self.preface_left.min(bytes.len());
                self.preface_left -= n;
                bytes = &bytes[n..];
            } else if self.payload_left > 0 {
                let n = self.payload_left.min(bytes.len());
                self.payload_left -= n;
                bytes = &bytes[n..];
            } else {
                let n = (FRAME_HEADER_BYTES - self.header_len).min(bytes.len());
                self.header[self.header_len..self.header_len + n].copy_from_slice(&bytes[..n]);
                self.header_len += n;
                bytes = &bytes[n..];
                if self.header_len == FRAME_HEADER_BYTES {
                    self.header_len = 0;
                    let [l0, l1, l2, kind, flags, ..] = self.header;
                    self.payload_left =
                        usize::from(l0) << 16 | usize::from(l1) << 8 | usize::from(l2);
                    if matches!(kind, PING | SETTINGS) && flags & ACK == 0 {
                        self.spend()?;
                    }
                }
            }
        }
        Ok(())
    }

    fn spend(&mut self) -> io::Result<()> {
        let now = Instant::now();
        let elapsed = now.duration_since(self.refilled).as_secs_f64();
        self.refilled = now;
        self.tokens = (self.tokens + elapsed * PER_SECOND).min(BURST);
        if self.tokens < 1.0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "HTTP/2 PING and SETTINGS frames past {PER_SECOND} a second \
                     ({BURST} at once): connection closed"
                ),
            ));
        }
        self.tokens -= 1.0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let length = payload.len();
        let mut bytes = vec![
            (length >> 16) as u8,
            (length >> 8) as u8,
            length as u8,
            kind,
            flags,
        ];
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        bytes.extend_from_slice(payload);
        bytes
    }

    #[tokio::test(start_paused = true)]
    async fn a_ping_flood_is_cut_after_the_burst_and_a_steady_client_never_is() {
        let mut meter = FrameMeter::new();
        meter.observe(PREFACE).unwrap();
        meter.observe(&frame(SETTINGS, 0, &[0; 6])).unwrap();
        // ACKs and other frames are free, whatever their number; a byte at a time reads the same.
        for _ in 0..1000 {
            for byte in frame(PING, ACK, b"accelfed") {
                meter.observe(&[byte]).unwrap();
            }
            meter.observe(&frame(0x0, 0, &[1; 300])).unwrap();
        }
        // One PING a second for a while: never cut.
        for _ in 0..300 {
            meter.observe(&frame(PING, 0, b"accelfed")).unwrap();
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        // A flood: cut within the burst.
        let mut flood = Vec::new();
        for _ in 0..(BURST as usize + 1) {
            flood.extend(frame(PING, 0, b"accelfed"));
        }
        let error = meter.observe(&flood).unwrap_err();
        assert!(error.to_string().contains("PING and SETTINGS"), "{error}");
    }
}
