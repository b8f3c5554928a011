//! Fixtures the registry's unit tests share.

use std::path::Path;

use accelfed_schemas::glue::SiteSnapshot;
use chrono::{TimeZone, Utc};

/// The example site of `examples/site.toml`, gathered at a fixed time.
pub(crate) fn example_site() -> SiteSnapshot {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let loaded = accelfed_provider::config::Config::load(&path).unwrap();
    let now = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(accelfed_provider::gather(&loaded.config, now))
        .unwrap()
        .snapshot
}
