//! The site configuration (`site.toml`): any text is either a configuration or an error that
//! names the file; a configuration with only static services gathers and renders in every format,
//! and the federation registry reads its GLUE 2.1 JSON back.
#![no_main]

use std::path::Path;

use accelfed_provider::config::Config;
use accelfed_schemas::render::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = match Config::parse(Path::new("site.toml"), text) {
        Ok(config) => config,
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("site.toml"),
                "unlocated error: {message}"
            );
            return;
        }
    };
    let _ = config.providers();
    if !(config.openstack.is_empty() && config.slurm.is_empty() && config.kubernetes.is_empty()) {
        return;
    }
    let Some(gathered) =
        accelfed_fuzz::run_ready(accelfed_provider::gather(&config, accelfed_fuzz::now()))
    else {
        return;
    };
    let Ok(gathered) = gathered else {
        return;
    };
    for format in Format::ALL {
        let bytes = accelfed_schemas::render::render(&gathered.snapshot, format);
        assert!(!bytes.is_empty(), "{format} rendered nothing");
        if format == Format::Glue21Json {
            // What a site publishes, the federation registry reads back.
            if let Err(error) = accelfed_schemas::glue::from_json::parse(&bytes) {
                panic!("the registry refuses the site's own document: {error}");
            }
        }
    }
});
