//! `GET /metrics` by hand over a TCP socket (HTTP/1.0, no client library needed).

use std::io::{Read, Write};
use std::net::SocketAddr;

/// The whole answer, head and body.
pub fn get(address: SocketAddr) -> String {
    let mut stream = std::net::TcpStream::connect(address).expect("connect to /metrics");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .expect("send the request");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read the answer");
    text
}
