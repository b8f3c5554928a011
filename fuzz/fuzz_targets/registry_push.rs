//! A registry push's bytes through the push checker (`Checker::check`, as `PUT
//! /registry/v1/document` runs it): a document with a key twice in one object is refused as such,
//! naming the key and a line:column inside the input, and one without is never refused for it; a
//! document the checker takes has no control character in an ID, and no Name past 255 characters.
#![no_main]

use std::sync::OnceLock;

use accelfed_central::{Checker, PushRejection, first_duplicate_key};
use accelfed_schemas::glue::entity::Value;
use libfuzzer_sys::fuzz_target;

fn checker() -> &'static Checker {
    static CHECKER: OnceLock<Checker> = OnceLock::new();
    CHECKER.get_or_init(|| Checker::new(1 << 20).expect("the shipped schema compiles"))
}

fuzz_target!(|data: &[u8]| {
    let result = checker().check(data, "FUZZ-SITE");
    match first_duplicate_key(data) {
        Some(duplicate) => {
            let lines = data.split(|&b| b == b'\n').count();
            assert!(
                duplicate.line >= 1 && duplicate.line <= lines && duplicate.column >= 1,
                "{duplicate:?} outside the input"
            );
            assert!(
                matches!(
                    result,
                    Err(PushRejection::DuplicateKey { .. } | PushRejection::TooLarge { .. })
                ),
                "a key twice, yet {result:?}"
            );
        }
        None => assert!(
            !matches!(result, Err(PushRejection::DuplicateKey { .. })),
            "refused for a duplicate key it does not have"
        ),
    }
    if let Ok(parsed) = result {
        for entity in &parsed.entities {
            assert!(!entity.id.chars().any(char::is_control), "{:?}", entity.id);
            if let Some(Value::Text(name)) = entity.attribute("Name") {
                assert!(
                    name.chars().count() <= 255,
                    "a Name of {} chars",
                    name.len()
                );
            }
        }
    }
});
