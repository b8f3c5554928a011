//! `[accounting.ship]`: where `accelfed ship` sends the spool's records (the central repository's
//! gRPC endpoint, the site's token) and how (batch size, batches in flight, retries). Read by the
//! shipper's caller only, so it lives beside the shipper. Relative paths are relative to the
//! configuration file.
//!
//! `endpoint` names one repository; `endpoints` (the same key, as a list) names several instances
//! of one central service, tried in order: a batch goes to the next when one is unreachable or
//! answers an error a retry may cure, never when it refuses the token.

use std::path::PathBuf;

use accelfed_net::HttpsUrls;
use serde::{Deserialize, Deserializer};

/// `[accounting.ship]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShipConfig {
    /// The repository's gRPC endpoint, `https://host:port` (TLS only), written `endpoint = "..."`;
    /// or several instances of the central service, `endpoints = ["https://a:9443",
    /// "https://b:9443"]`, tried in this order.
    #[serde(alias = "endpoint")]
    pub endpoints: HttpsUrls,
    /// A file holding the site's token (one line; readable by the accelfed user only). The token
    /// itself never goes into this file.
    pub token_file: PathBuf,
    /// A CA to trust besides the system's roots (the one that signed the repository's
    /// certificate): a PEM file, or a folder of them such as `/etc/grid-security/certificates`.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Records per batch (1..=50000). Must not exceed the repository's `ingest.max_batch`.
    #[serde(default = "default_batch_size", deserialize_with = "batch_size")]
    pub batch_size: usize,
    /// Batches on the wire at once (1..=16): the next batches are read and sent while the
    /// repository stores one.
    #[serde(default = "default_in_flight", deserialize_with = "in_flight")]
    pub in_flight: usize,
    /// Calls per batch and endpoint before `ship` gives up until its next run (at least 1): with
    /// two endpoints a batch is sent up to twice this many times, alternating.
    #[serde(default = "default_attempts", deserialize_with = "attempts")]
    pub attempts: u32,
    /// Delay before the first retry, in milliseconds; doubles per retry, with jitter.
    #[serde(default = "default_backoff_initial_ms")]
    pub backoff_initial_ms: u64,
    /// The longest delay between retries, in milliseconds.
    #[serde(default = "default_backoff_max_ms")]
    pub backoff_max_ms: u64,
    /// Seconds one call may take, whole: connecting, the TLS handshake, the request and the
    /// answer. A call that runs out of time is an attempt that failed.
    #[serde(default = "default_timeout_s", deserialize_with = "timeout_s")]
    pub timeout_s: u64,
}

impl ShipConfig {
    /// The table with only its two required keys, every other at its default: what `accelfed
    /// ship --endpoint URL --token-file FILE` uses for a file without `[accounting.ship]`.
    pub fn new(endpoints: HttpsUrls, token_file: PathBuf) -> Self {
        Self {
            endpoints,
            token_file,
            ca: None,
            batch_size: default_batch_size(),
            in_flight: default_in_flight(),
            attempts: default_attempts(),
            backoff_initial_ms: default_backoff_initial_ms(),
            backoff_max_ms: default_backoff_max_ms(),
            timeout_s: default_timeout_s(),
        }
    }
}

fn default_batch_size() -> usize {
    500
}
fn default_in_flight() -> usize {
    3
}
fn default_attempts() -> u32 {
    8
}
fn default_backoff_initial_ms() -> u64 {
    1_000
}
fn default_backoff_max_ms() -> u64 {
    60_000
}
fn default_timeout_s() -> u64 {
    60
}

fn timeout_s<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let value = u64::deserialize(deserializer)?;
    if value == 0 {
        return Err(serde::de::Error::custom("timeout_s must be at least 1"));
    }
    Ok(value)
}

fn batch_size<'de, D: Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    let value = usize::deserialize(deserializer)?;
    if !(1..=50_000).contains(&value) {
        return Err(serde::de::Error::custom(format!(
            "batch_size must be 1..=50000, got {value}"
        )));
    }
    Ok(value)
}

fn in_flight<'de, D: Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    let value = usize::deserialize(deserializer)?;
    if !(1..=16).contains(&value) {
        return Err(serde::de::Error::custom(format!(
            "in_flight must be 1..=16, got {value}"
        )));
    }
    Ok(value)
}

fn attempts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let value = u32::deserialize(deserializer)?;
    if value == 0 {
        return Err(serde::de::Error::custom("attempts must be at least 1"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "endpoint = \"https://repo.example.org:9443\"\ntoken_file = \"token\"\n";

    #[test]
    fn shipping_defaults() {
        let ship: ShipConfig = toml::from_str(BASE).expect("a valid table");
        assert_eq!(
            (ship.batch_size, ship.in_flight, ship.attempts),
            (500, 3, 8)
        );
        let new = ShipConfig::new(ship.endpoints.clone(), ship.token_file.clone());
        assert_eq!(
            format!("{new:?}"),
            format!("{ship:?}"),
            "new() takes the same defaults"
        );
    }

    #[test]
    fn an_endpoint_that_is_not_https_is_refused_at_its_line() {
        let err =
            toml::from_str::<ShipConfig>("token_file = \"t\"\nendpoint = \"http://r:9443\"\n")
                .expect_err("plain http")
                .to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("must be an https:// URL"), "{err}");
    }

    #[test]
    fn several_endpoints_are_read_in_order() {
        let ship: ShipConfig = toml::from_str(
            "endpoints = [\"https://a.example.org:9443\", \"https://b.example.org:9443\"]\n\
             token_file = \"t\"\n",
        )
        .expect("a list of endpoints");
        assert_eq!(
            ship.endpoints.to_string(),
            "https://a.example.org:9443, https://b.example.org:9443"
        );
        let err = toml::from_str::<ShipConfig>("token_file = \"t\"\nendpoints = []\n")
            .expect_err("an empty list")
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("lists no URL"),
            "{err}"
        );
    }

    #[test]
    fn in_flight_out_of_range_is_refused_at_its_line() {
        for bad in ["0", "17"] {
            let text = format!("{BASE}in_flight = {bad}\n");
            let err = toml::from_str::<ShipConfig>(&text)
                .expect_err("out of range")
                .to_string();
            assert!(err.contains("in_flight must be 1..=16"), "{err}");
            assert!(err.contains("line 3"), "{err}");
        }
        let ship: ShipConfig = toml::from_str(&format!("{BASE}in_flight = 16\n")).expect("valid");
        assert_eq!(ship.in_flight, 16);
    }
}
