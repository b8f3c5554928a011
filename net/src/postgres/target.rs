//! A PostgreSQL URL read into tokio-postgres's settings and the TLS connector its `sslmode` and
//! `sslrootcert` ask for.

use std::str::FromStr;

use super::Trust;
use super::connector::PostgresTls;

/// libpq's `sslmode` values that accelfed supports (libpq's `allow`, plain first and TLS only
/// when refused, protects nothing and is refused as a setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self, String> {
        match value {
            "disable" => Ok(Self::Disable),
            "prefer" => Ok(Self::Prefer),
            "require" => Ok(Self::Require),
            "verify-ca" => Ok(Self::VerifyCa),
            "verify-full" => Ok(Self::VerifyFull),
            "allow" => Err(
                "sslmode=allow is not supported (it tries without TLS first); use prefer or stricter"
                    .to_owned(),
            ),
            other => Err(format!(
                "sslmode={other:?} is not one of disable, prefer, require, verify-ca, verify-full"
            )),
        }
    }
}

/// Where and how to connect: tokio-postgres's settings and the connector for them.
#[derive(Clone)]
pub struct PostgresTarget {
    pub config: tokio_postgres::Config,
    pub tls: PostgresTls,
    pub ssl_mode: SslMode,
}

impl std::fmt::Debug for PostgresTarget {
    /// tokio-postgres's own `Debug` of its settings masks the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTarget")
            .field("config", &self.config)
            .field("ssl_mode", &self.ssl_mode)
            .finish()
    }
}

/// Reads `url` (`postgres://user:password@host:port/database?sslmode=...&sslrootcert=...`) with
/// the project's `trust`. The error never holds the URL (it may hold a password); the caller
/// names the database by its redacted form.
pub fn target(url: &str, trust: &Trust) -> Result<PostgresTarget, String> {
    let (rest, ssl_mode, root_cert) = take_tls_parameters(url)?;
    let mut config =
        tokio_postgres::Config::from_str(&rest).map_err(|error| format!("the URL: {error}"))?;
    let extra = match root_cert.as_deref() {
        None | Some("system") => None,
        Some(path) => Some(crate::trust::read_ca(
            "the database URL's sslrootcert",
            std::path::Path::new(path),
        )?),
    };
    // libpq: with a root certificate, prefer and require check the chain as verify-ca does.
    let check = match ssl_mode {
        SslMode::Disable => None,
        SslMode::Prefer | SslMode::Require if root_cert.is_none() => Some(Check::Nothing),
        SslMode::Prefer | SslMode::Require | SslMode::VerifyCa => Some(Check::Chain),
        SslMode::VerifyFull => Some(Check::ChainAndName),
    };
    config.ssl_mode(match ssl_mode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        _ => tokio_postgres::config::SslMode::Require,
    });
    let tls = match check {
        None => PostgresTls::disabled(),
        Some(check) => {
            let mut pem = trust.extra_pem().map(<[u8]>::to_vec).unwrap_or_default();
            pem.extend(extra.unwrap_or_default());
            let trust = if pem.is_empty() {
                Trust::system()
            } else {
                Trust::from_pem(pem)
            };
            PostgresTls::new(super::verify::client_config(&trust, check)?)
        }
    };
    Ok(PostgresTarget {
        config,
        tls,
        ssl_mode,
    })
}

/// What the connector checks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Only that the handshake is signed by the certificate's key (libpq's `require`).
    Nothing,
    /// The chain up to a trusted root (`verify-ca`).
    Chain,
    /// The chain and that the certificate names the host (`verify-full`).
    ChainAndName,
}

/// Splits `sslmode` and `sslrootcert` off the URL's query string; returns the rest, the mode
/// (libpq's default `prefer` when absent) and the root certificate's path.
pub(super) fn take_tls_parameters(url: &str) -> Result<(String, SslMode, Option<String>), String> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), SslMode::Prefer, None));
    };
    let mut mode = SslMode::Prefer;
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => mode = SslMode::parse(&percent_decode(value)?)?,
            "sslrootcert" => root_cert = Some(percent_decode(value)?),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, mode, root_cert))
}

/// `%XX` escapes of a query value (a path with spaces or `&`), as tokio-postgres decodes its own.
fn percent_decode(value: &str) -> Result<String, String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = value
                .get(at + 1..at + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .ok_or_else(|| format!("a bad %-escape in the URL's query at byte {at}"))?;
            out.push(hex);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the URL's query is not UTF-8 once decoded".to_owned())
}
