//! The central service's configuration (`central.toml`): any text is either a configuration or an
//! error that names the file; an accepted configuration gives every site its own token hash (two
//! sites sharing one would let one log in as the other), a positive ingest batch, a database
//! location, and a registry limit the push checker is built with.
#![no_main]

use std::path::{Path, PathBuf};

use accelfed_central::{CentralConfig, Checker, LoadedCentral};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `CentralConfig::load` reads text; bytes that are not UTF-8 never reach the parser.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = match CentralConfig::parse(Path::new("central.toml"), text) {
        Ok(config) => config,
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("central.toml"),
                "unlocated error: {message}"
            );
            return;
        }
    };
    assert!(
        config.tokens().shared_hash().is_none(),
        "two sites share a token hash"
    );
    assert!(config.ingest.max_batch > 0, "an ingest batch of 0 records");
    assert!(
        !(config.database.url.is_some() && config.database.path.is_some()),
        "both a PostgreSQL url and a SQLite path"
    );
    let loaded = LoadedCentral {
        path: PathBuf::from("/etc/accelfed/central.toml"),
        config,
    };
    assert!(!loaded.database_location().is_empty());
    assert!(!loaded.registry_location().is_empty());
    if let Err(error) = Checker::new(loaded.config.registry.max_document_bytes) {
        panic!("the registry's checker cannot be built: {error}");
    }
});
