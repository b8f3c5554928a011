//! The site configuration (`site.toml`): any text is either a configuration or an error that
//! names the file; the static part of a configuration that parses gathers, renders in every
//! format, and passes the federation registry's push checks on its GLUE 2.1 JSON (what
//! `accelfed validate` checks).
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use accelfed_central::{Checker, RegistryConfig};
use accelfed_provider::config::{Config, ConfigError};
use accelfed_schemas::glue::SnapshotError;
use accelfed_schemas::render::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Bytes that are not UTF-8 are refused at the position of the first bad one, as `Config::load`
    // does.
    let text = match ConfigError::utf8(Path::new("site.toml"), data.to_vec()) {
        Ok(text) => text,
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("site.toml:"),
                "unlocated error: {message}"
            );
            return;
        }
    };
    let config = match Config::parse(Path::new("site.toml"), &text) {
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
    // What `accelfed validate` checks beyond parsing: the static part gathers, and the registry's
    // push checks pass on its GLUE 2.1 JSON. A configuration validate accepts is one whose
    // document the registry accepts; every value the registry would refuse is refused by
    // validation (where it is written, but for long IDs built from several names).
    let static_part = config.static_part();
    let gathered = accelfed_fuzz::run_ready(accelfed_provider::gather(
        &static_part,
        accelfed_fuzz::now(),
    ))
    .expect("the static provider does no IO, so gathering never waits");
    let gathered = match gathered {
        Ok(gathered) => gathered,
        // An ID built from several names may still be too long for LDAP: `accelfed validate`
        // refuses it (exit 2) once the document is built. Anything else the snapshot refuses
        // (an ID twice, a dangling reference) is a check the configuration's parse lacks.
        Err(SnapshotError::TooLongForLdap { .. }) => return,
        // Node types, GPUs and shares whose physical GPUs disagree (cards per node against
        // slots x share, a manager's GPUs against its nodes): the document's physical-count
        // checker refuses them once the document is built, and `accelfed validate` reports that
        // (exit 2) naming both entities and both numbers; only cards against explicit `slices`
        // is refused where written so far.
        Err(SnapshotError::Physical(_)) => return,
        Err(error) => panic!("a configuration that parses does not gather: {error}"),
    };
    assert!(gathered.failures.is_empty(), "{:?}", gathered.failures);
    for format in Format::ALL {
        let bytes = accelfed_schemas::render::render(&gathered.snapshot, format);
        assert!(!bytes.is_empty(), "{format} rendered nothing");
        if format == Format::Glue21Json {
            if let Err(rejection) = checker().check(&bytes, config.site.name.as_str()) {
                panic!("the registry refuses the site's own document: {rejection}");
            }
        }
    }
});

/// The registry's checker, with its default document limit; compiling the schema once per run.
fn checker() -> &'static Checker {
    static CHECKER: OnceLock<Checker> = OnceLock::new();
    CHECKER.get_or_init(|| {
        Checker::new(RegistryConfig::default().max_document_bytes)
            .expect("the shipped schema compiles")
    })
}
