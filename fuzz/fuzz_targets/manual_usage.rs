//! The manual-usage file (`[accounting] observations`, JSON lines): each line of any bytes (UTF-8
//! or not) is either an observation or an error naming the file and line; the observations meter into records
//! with unique ids that the central repository's own check accepts.
#![no_main]

use std::collections::HashSet;

use accelfed_accounting::meter::{Installed, meter, parse_manual_bytes};
use accelfed_schemas::names::SiteName;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let site = SiteName::new("FUZZ-SITE").expect("a valid name");
    let usage = parse_manual_bytes("usage.jsonl", data, &site);
    for error in &usage.refused {
        assert!(error.line > 0, "no line in {error}");
        assert!(error.to_string().starts_with("usage.jsonl:"), "{error}");
    }
    let observations = usage.observations;
    let now = accelfed_fuzz::now();
    let metered = meter(&observations, now, &Installed::default());
    let mut ids = HashSet::new();
    for record in &metered.records {
        assert!(
            ids.insert(record.id()),
            "two records with id {}",
            record.id()
        );
        if let Err(error) = record.validate(now) {
            panic!("the meter made a record the repository refuses: {error}\n{record:?}");
        }
    }
    for refused in &metered.refused {
        let _ = refused.to_string();
    }
});
