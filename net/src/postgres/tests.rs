use super::target::take_tls_parameters;
use super::*;

#[test]
fn the_tls_parameters_leave_the_url_and_the_rest_stays() {
    let (rest, mode, root) = take_tls_parameters(
        "postgres://u:p@db:5432/acc?application_name=x&sslmode=verify-full&sslrootcert=/etc/a%20b.pem",
    )
    .unwrap();
    assert_eq!(rest, "postgres://u:p@db:5432/acc?application_name=x");
    assert_eq!(mode, SslMode::VerifyFull);
    assert_eq!(root.as_deref(), Some("/etc/a b.pem"));
}

#[test]
fn without_sslmode_the_mode_is_libpqs_default_prefer() {
    let (rest, mode, root) = take_tls_parameters("postgres://db/acc?sslrootcert=").unwrap();
    assert_eq!(rest, "postgres://db/acc");
    assert_eq!(mode, SslMode::Prefer);
    assert_eq!(root.as_deref(), Some(""));
    let (rest, mode, _) = take_tls_parameters("postgres://db/acc").unwrap();
    assert_eq!(
        (rest.as_str(), mode),
        ("postgres://db/acc", SslMode::Prefer)
    );
}

#[test]
fn an_unknown_or_unsafe_mode_is_refused_by_name() {
    let error = target("postgres://db/acc?sslmode=verify_full", &Trust::system()).unwrap_err();
    assert!(error.contains("\"verify_full\" is not one of"), "{error}");
    let error = target("postgres://db/acc?sslmode=allow", &Trust::system()).unwrap_err();
    assert!(error.contains("allow is not supported"), "{error}");
    let error = target(
        "postgres://db/acc?sslmode=require&sslrootcert=%zz",
        &Trust::system(),
    )
    .unwrap_err();
    assert!(error.contains("bad %-escape"), "{error}");
}

#[test]
fn a_missing_root_certificate_is_named() {
    let error = target(
        "postgres://db/acc?sslmode=verify-ca&sslrootcert=/nonexistent/root.pem",
        &Trust::system(),
    )
    .unwrap_err();
    assert!(error.contains("sslrootcert"), "{error}");
    assert!(error.contains("/nonexistent/root.pem"), "{error}");
}

#[test]
fn the_modes_map_to_what_tokio_postgres_asks_for() {
    use tokio_postgres::config::SslMode as Asked;
    for (mode, asked) in [
        ("disable", Asked::Disable),
        ("prefer", Asked::Prefer),
        ("require", Asked::Require),
        ("verify-ca", Asked::Require),
        ("verify-full", Asked::Require),
    ] {
        let found = target(
            &format!("postgres://db/acc?sslmode={mode}"),
            &Trust::system(),
        )
        .unwrap()
        .config
        .get_ssl_mode();
        assert_eq!(found, asked, "{mode}");
    }
}
