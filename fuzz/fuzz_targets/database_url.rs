//! A database location (`[database] url`, `--database`): whatever an operator writes, the password
//! it holds never shows in its `Display` or `Debug`, in the userinfo (with `@`, `/` or `:` in it),
//! in a `password=` query parameter or in a key=value connection string; masking is idempotent.
#![no_main]

use accelfed_schemas::database_url::{DatabaseUrl, redact};
use libfuzzer_sys::fuzz_target;

/// The password planted in each form; an input that already holds it proves nothing.
const SECRET: &str = "Zq9-planted-secret";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let url = DatabaseUrl::new(text);
    let shown = url.to_string();
    assert_eq!(redact(&shown), shown, "masking twice changed {text:?}");
    assert_eq!(format!("{url:?}"), format!("DatabaseUrl({shown:?})"));
    if text.contains(SECRET) || text.contains('\'') {
        return;
    }
    // The rest of the input is the host, path and query; the first byte picks the scheme's case.
    let scheme = if data.first().is_some_and(|b| b % 2 == 0) {
        "postgres"
    } else {
        "PostgreSQL"
    };
    for planted in [
        format!("{scheme}://acct:{SECRET}@{text}"),
        format!("{scheme}://acct:{SECRET}@x@{text}"),
        format!("{scheme}://acct@db/acc?password={SECRET}&{text}"),
        format!("host=db password={SECRET} {text}"),
    ] {
        let url = DatabaseUrl::new(&planted);
        assert!(
            !url.to_string().contains(SECRET) && !format!("{url:?}").contains(SECRET),
            "the password shows in {url}"
        );
    }
});
