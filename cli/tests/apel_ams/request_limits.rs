//! What the site sends to AMS beyond the happy path: messages split so the signed and encoded
//! request fits the limit, unsigned only when asked, a bad key refused as configuration.

use super::*;

/// Long user names and a 150,000-byte limit: messages split so each signed, encoded request stays
/// under the limit, and not far under it.
#[test]
fn messages_split_so_the_signed_and_encoded_request_fits_the_limit() {
    const LIMIT: usize = 150_000;
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let seen = Arc::new(Mutex::new(Seen {
        ca: Some(pki.ca.clone()),
        ..Seen::default()
    }));
    let port = runtime.block_on(fake_ams(&pki, seen.clone()));
    let user = format!("/DC=org/DC=example/CN={}", "x".repeat(200));
    let config = site_with(
        dir.path(),
        port,
        &pki,
        KEY,
        &signing(&pki),
        &format!("max_message_bytes = {LIMIT}\n"),
        &user,
    );
    assert!(
        accelfed(&["meter", "--since", "2026-01-01"], &config)
            .status
            .success()
    );
    let exported = accelfed(&["export"], &config);
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let seen = seen.lock().unwrap();
    // ~420 bytes a record, 1,200 records: ~500 kB of messages, at most ~110 kB each.
    assert!(seen.messages.len() >= 5, "{}", seen.messages.len());
    assert_eq!(all_valid_for_apel(&seen.messages), RECORDS);
    for (n, bytes) in seen.request_bytes.iter().enumerate() {
        assert!(*bytes <= LIMIT, "request {n}: {bytes} bytes");
        if n + 1 < seen.request_bytes.len() {
            assert!(*bytes > LIMIT - 2_000, "request {n}: only {bytes} bytes");
        }
    }
}

#[test]
fn unsigned_only_when_asked_and_a_bad_key_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let port = runtime.block_on(fake_ams(&pki, seen.clone()));

    // No certificate and no `unsigned`: refused before anything is sent.
    let config = site_with(dir.path(), port, &pki, KEY, "", "", "");
    assert!(
        accelfed(&["meter", "--since", "2026-01-01"], &config)
            .status
            .success()
    );
    let output = accelfed(&["export"], &config);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("certificate and key are required"),
        "{stderr}"
    );

    // A key that is not the certificate's: a configuration error naming the certificate.
    let other = dir.path().join("other.key");
    std::fs::write(&other, accelfed_tests::pki::unrelated_key_pem()).unwrap();
    let extra = format!(
        "certificate = \"{}\"\nkey = \"{}\"\n",
        pki.cert.display(),
        other.display()
    );
    let config = site_with(dir.path(), port, &pki, KEY, &extra, "", "");
    let output = accelfed(&["export"], &config);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("server.pem"), "{stderr}");
    assert_eq!(seen.lock().unwrap().requests, 0);

    // `unsigned = true`: plain JSON, as a test receiver wants it.
    let config = site_with(dir.path(), port, &pki, KEY, "unsigned = true\n", "", "");
    let output = accelfed(&["export"], &config);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.messages.len(), 2);
    assert_eq!(all_valid_for_apel(&seen.messages), RECORDS);
}
