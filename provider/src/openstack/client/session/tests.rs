use super::*;

/// A port that answers whatever arrives in plain HTTP and closes, as a service's non-TLS port
/// would answer a TLS handshake.
async fn plain_http_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let mut buffer = [0u8; 1024];
            let _ = socket.readable().await;
            let _ = socket.try_read(&mut buffer);
            let _ = socket.writable().await;
            let _ = socket.try_write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    port
}

fn credentials(auth_url: String) -> Credentials {
    Credentials {
        auth_url,
        method: Method::ApplicationCredential {
            id: "app".to_owned(),
            secret: Secret::new("not-a-real-secret".to_owned()),
        },
        region: None,
        interface: "public".to_owned(),
        ca_file: None,
        origin: "the test".to_owned(),
    }
}

async fn connect(auth_url: String) -> OpenstackError {
    Session::connect(credentials(auth_url), Duration::from_secs(5), 1)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn keystone_on_a_port_that_does_not_speak_tls_is_named_and_not_retryable() {
    let port = plain_http_port().await;
    let error = connect(format!("https://127.0.0.1:{port}/v3")).await;
    let text = error.to_string();
    assert!(
        text.contains("corrupt message") || text.contains("InvalidContentType"),
        "{text}"
    );
    assert!(!error.retryable(), "{text}");
    assert!(text.contains("retry will not help"), "{text}");
}

#[tokio::test]
async fn a_refused_connection_keeps_its_cause_and_may_be_retried() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = connect(format!("https://127.0.0.1:{port}/v3")).await;
    let text = error.to_string();
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
    assert!(error.retryable(), "{text}");
    assert!(text.contains("retry may help"), "{text}");
}
