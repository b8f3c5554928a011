//! GLUE 2.1 JSON read back (what the federation registry does with a site's push): any bytes are
//! either a document or an error; a document gives offers, and its LDIF (GLUE 2.0 and 2.1, as the
//! LDAP sync writes it) reads back to the same entries.
#![no_main]

use accelfed_schemas::glue::from_json;
use accelfed_schemas::offer::{Filter, offers};
use accelfed_schemas::render::ldif::writer::LdifWriter;
use accelfed_schemas::render::ldif::{LdifMode, entries_of};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let document = match from_json::parse(data) {
        Ok(document) => document,
        Err(error) => {
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    assert_eq!(document.entities.len(), document.stamps.len());
    let _ = document.site();
    let now = accelfed_fuzz::now();
    let filter = Filter::default();
    for offer in offers(&document.entities, &document.stamps) {
        let offer = offer.at(now);
        let _ = filter.matches(&offer);
    }
    for mode in [LdifMode::Glue20, LdifMode::Glue21] {
        let entries = entries_of(mode, &document.entities, &now, 3600);
        let mut writer = LdifWriter::new();
        for entry in &entries {
            entry.write(&mut writer);
        }
        let ldif = writer.finish();
        let records = accelfed_fuzz::read_ldif(&ldif)
            .unwrap_or_else(|error| panic!("{mode:?} LDIF does not read back: {error}"));
        assert_eq!(
            records.len(),
            entries.len(),
            "{mode:?}: records written and read"
        );
        for (record, entry) in records.iter().zip(&entries) {
            let written: Vec<(String, String)> =
                std::iter::once(("dn".to_owned(), entry.dn.clone()))
                    .chain(
                        entry
                            .object_classes
                            .iter()
                            .map(|c| ("objectClass".to_owned(), (*c).to_owned())),
                    )
                    .chain(
                        entry
                            .attributes
                            .iter()
                            .filter(|(_, value)| !value.is_empty())
                            .map(|(name, value)| (name.to_string(), value.to_string())),
                    )
                    .collect();
            assert_eq!(record, &written, "{mode:?}: an entry read back differs");
        }
    }
});
