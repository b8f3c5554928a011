//! DN handling (RFC 4514): escaping any value and reading it back gives the value (the model's
//! DN module, which the renderer and the LDAP sync share), and reading any DN text never panics.
#![no_main]

use accelfed_schemas::render::ldif::dn::{
    SUFFIX, child, dn_key, escape_value, first_rdn_value, is_under, rdns, unescape_value,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Reading DN text as a server may send it.
    let _ = unescape_value(text);
    let _ = first_rdn_value(text);
    let _ = dn_key(text);
    let _ = rdns(text);
    let _ = is_under(text, SUFFIX);

    // Escape, then parse: the value comes back.
    let escaped = escape_value(text);
    assert_eq!(
        unescape_value(&escaped).as_deref(),
        Ok(text),
        "escaped as {escaped:?}"
    );
    let dn = child("GLUE2DomainID", text, SUFFIX);
    assert_eq!(first_rdn_value(&dn).as_deref(), Ok(text), "in {dn:?}");
    let parts = rdns(&dn);
    assert_eq!(parts.len(), 2, "{dn:?} split as {parts:?}");
    assert!(is_under(&dn, SUFFIX), "{dn:?} is not under {SUFFIX}");
    if !text.contains('\u{1}') {
        assert_eq!(
            dn_key(&dn),
            format!("glue2domainid={text}\u{1}o=glue"),
            "{dn:?}"
        );
    }
    // Two values, two DNs: escaping never makes different values one name.
    let other = format!("{text}x");
    assert_ne!(dn_key(&child("GLUE2DomainID", &other, SUFFIX)), dn_key(&dn));
});
