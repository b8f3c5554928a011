use std::io::{Read, Write};

use super::*;

/// A plain-HTTP server on 127.0.0.1 answering one request with `status` and `body_len` bytes
/// of `fill`; its address.
fn answer_once(status: &'static str, body_len: usize, fill: u8) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            request.push(byte[0]);
        }
        let head = format!("HTTP/1.1 {status}\r\ncontent-length: {body_len}\r\n\r\n");
        let _ = stream.write_all(head.as_bytes());
        let chunk = vec![fill; 1 << 20];
        let mut left = body_len;
        while left > 0 {
            let n = left.min(chunk.len());
            if stream.write_all(&chunk[..n]).is_err() {
                return; // the client stopped reading, as it should past the limit
            }
            left -= n;
        }
    });
    format!("http://{address}")
}

#[tokio::test]
async fn a_huge_refusal_is_quoted_short() {
    let url = answer_once("502 Bad Gateway", 5_000_000, b'x');
    let client = client(None).unwrap();
    let err = get(&client, &url, "/registry/v1/offers", &[])
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("(502)"), "{}", &message[..200]);
    assert!(
        message.ends_with("... (5000000 bytes)"),
        "{}",
        &message[..200]
    );
    assert!(message.len() < 1200, "{} bytes", message.len());
}

#[tokio::test]
async fn an_answer_past_the_limit_is_not_read_whole() {
    let url = answer_once("200 OK", MAX_ANSWER_BYTES + (1 << 20), b'[');
    let client = client(None).unwrap();
    let err = get(&client, &url, "/registry/v1/offers", &[])
        .await
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::TooLarge { limit, .. } if limit == MAX_ANSWER_BYTES),
        "{err}"
    );
    assert!(!err.is_transient());
}

#[test]
fn the_next_link_is_resolved_on_the_same_registry_only() {
    let base = "https://registry.example.org:8443/registry/v1/offers?vo=atlas";
    assert_eq!(
        next_link(
            base,
            "</registry/v1/offers?vo=atlas&limit=2&page=2>; rel=\"next\""
        ),
        Some(Some(
            "https://registry.example.org:8443/registry/v1/offers?vo=atlas&limit=2&page=2"
                .to_owned()
        ))
    );
    // Other relations are not followed; none at all ends the list.
    assert_eq!(next_link(base, "</x>; rel=\"prev\""), Some(None));
    // Another host or port, or a target that is no URL reference, is refused.
    assert_eq!(
        next_link(base, "<https://elsewhere.example.org/offers>; rel=\"next\""),
        None
    );
    assert_eq!(
        next_link(base, "<https://registry.example.org:9443/x>; rel=next"),
        None
    );
    assert_eq!(next_link(base, "/x; rel=next"), None);
}
