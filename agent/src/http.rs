//! The local endpoint: `GET /metrics` (Prometheus text) and `GET /v1/state` (JSON). Plain HTTP on
//! 127.0.0.1 by default: the meter reads it on the node, nothing leaves the host. One thread
//! answers one request at a time; the documents are made once per period.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The documents the endpoint serves, replaced after every reading.
#[derive(Debug, Default)]
pub struct Published {
    pub json: String,
    pub prometheus: String,
}

/// Answers requests on `listener` until the process ends.
pub fn serve(listener: TcpListener, published: Arc<Mutex<Published>>) {
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => {
                if let Err(error) = answer(stream, &published) {
                    tracing::debug!(%error, "agent endpoint: request dropped");
                }
            }
            Err(error) => tracing::warn!(%error, "agent endpoint: accept failed"),
        }
    }
}

fn answer(mut stream: TcpStream, published: &Mutex<Published>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut head = Vec::with_capacity(512);
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let read = stream.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let request_line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let request_line = String::from_utf8_lossy(request_line);
    let mut words = request_line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = {
        let documents = published
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match (method, path) {
            ("GET", "/metrics") => (
                "200 OK",
                "text/plain; version=0.0.4; charset=utf-8",
                documents.prometheus.clone(),
            ),
            ("GET", "/v1/state") => ("200 OK", "application/json", documents.json.clone()),
            ("GET", _) => (
                "404 Not Found",
                "text/plain; charset=utf-8",
                "not found: /metrics or /v1/state\n".to_owned(),
            ),
            _ => (
                "405 Method Not Allowed",
                "text/plain; charset=utf-8",
                "GET only\n".to_owned(),
            ),
        }
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}
