use accelfed_testkit::fake_http::{closed_port, plain_http_port};

use super::*;

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
    let port = closed_port();
    let error = connect(format!("https://127.0.0.1:{port}/v3")).await;
    let text = error.to_string();
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
    assert!(error.retryable(), "{text}");
    assert!(text.contains("retry may help"), "{text}");
}
