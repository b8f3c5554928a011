use super::*;

#[test]
fn every_special_character_is_escaped_as_slapd_prints_it() {
    // slapd 2.5 (Debian 12) printed this DN back for `a\,b\"c\+d\\e\<f\>g\;h\=i#j` as added.
    assert_eq!(
        escape_value(r#"a,b"c+d\e<f>g;h=i#j"#),
        r"a\2Cb\22c\2Bd\5Ce\3Cf\3Eg\3Bh\3Di#j"
    );
}

#[test]
fn leading_hash_and_space_and_trailing_space_are_escaped_only_at_the_ends() {
    // slapd printed `\23lead\20` for `\#lead\ `.
    assert_eq!(escape_value("#lead "), "\\23lead\\20");
    assert_eq!(escape_value("#a#b"), "\\23a#b");
    assert_eq!(escape_value(" a b "), "\\20a b\\20");
    assert_eq!(escape_value(" "), "\\20");
    assert_eq!(escape_value("a  b"), "a  b");
}

/// Values that meet every escaping rule (specials, spaces and `#` at either end, NUL,
/// non-ASCII) and some that meet none, for the properties every value must have.
const AWKWARD: &[&str] = &[
    "urn:accelfed:S:ee:hpc/gpu-node-0001",
    "plain",
    "",
    "Ünï-Site",
    "#Ünï, \"site\"+<x>;=\\",
    "#",
    "#a",
    "a#",
    " a",
    " lead",
    "a ",
    "trail ",
    "ü ",
    "a b",
    "a=b",
    "=",
    "a,b",
    "a\\b",
    "a\0b",
    "ä\0ö",
];

#[test]
fn the_fast_path_is_taken_exactly_when_nothing_changes() {
    for &value in AWKWARD {
        let mut escaped = String::new();
        escape_each(&mut escaped, value);
        assert_eq!(needs_escaping(value), escaped != value, "{value:?}");
    }
}

#[test]
fn nul_becomes_a_hex_pair() {
    assert_eq!(escape_value("a\0b"), "a\\00b");
    assert_eq!(
        unescape_value("a\\00b").expect("valid in this test"),
        "a\0b"
    );
}

#[test]
fn non_ascii_is_kept_as_utf8() {
    assert_eq!(escape_value("Ünï-Site"), "Ünï-Site");
    assert_eq!(escape_value("サイト"), "サイト");
}

#[test]
fn unescape_reverses_escape_for_awkward_values() {
    for &value in AWKWARD {
        assert_eq!(
            unescape_value(&escape_value(value)).expect("valid in this test"),
            value,
            "{value:?}"
        );
    }
}

#[test]
fn unescape_reads_hex_pairs_and_refuses_broken_escapes() {
    assert_eq!(
        unescape_value("\\C3\\9Cx").expect("valid in this test"),
        "Üx"
    );
    assert_eq!(
        unescape_value("x\\").expect_err("invalid in this test"),
        DnError::TrailingBackslash("x\\".into())
    );
    assert!(matches!(unescape_value("\\C"), Err(DnError::BadHex(_))));
    assert!(matches!(unescape_value("\\FF"), Err(DnError::NotUtf8(_))));
}

#[test]
fn child_dns_and_first_rdn_round_trip() {
    let dn = child("GLUE2DomainID", "a,b=c\\", SUFFIX);
    assert_eq!(dn, "GLUE2DomainID=a\\2Cb\\3Dc\\5C,o=glue");
    assert_eq!(first_rdn_value(&dn).expect("valid in this test"), "a,b=c\\");
}

#[test]
fn rdns_split_at_unescaped_commas_only() {
    assert_eq!(
        rdns("GLUE2DomainID=a\\,b,GLUE2GroupID=grid,o=glue"),
        ["GLUE2DomainID=a\\,b", "GLUE2GroupID=grid", "o=glue"]
    );
    assert_eq!(rdns("o=glue"), ["o=glue"]);
    assert!(rdns("").is_empty());
    assert_eq!(depth("x=a\\\\,y=b"), 2);
}

#[test]
fn only_spaces_around_rdns_are_dropped() {
    // Found by the ldap_dn fuzz target: an ID ending in a newline (a registry push may carry
    // one) lost it in the key, so `x\n` and `x` were one entry to the sync's plan.
    assert_ne!(
        dn_key("GLUE2DomainID=x\n,o=glue"),
        dn_key("GLUE2DomainID=x,o=glue")
    );
    assert_eq!(rdns("a=x\t, b=y "), ["a=x\t", "b=y"]);
    assert_eq!(dn_key("a=x\\ ,o=glue"), "a=x \u{1}o=glue");
    assert_eq!(dn_key("a=x\\\\ ,o=glue"), "a=x\\\u{1}o=glue");
    assert!(rdns("  ").is_empty());
}

#[test]
fn two_escapings_of_the_same_dn_share_a_key() {
    assert_eq!(
        dn_key("GLUE2DomainID=a\\,b,o=glue"),
        dn_key("glue2domainid=a\\2Cb, O=glue")
    );
    assert_ne!(
        dn_key("GLUE2DomainID=A,o=glue"),
        dn_key("GLUE2DomainID=a,o=glue")
    );
    assert_ne!(dn_key("x=a\\,b"), dn_key("x=a,b"));
}

#[test]
fn under_compares_whole_rdns() {
    assert!(is_under(
        "a=1,GLUE2GroupID=grid,o=glue",
        "GLUE2GroupID=grid,o=glue"
    ));
    assert!(is_under(
        "GLUE2GroupID=grid,o=glue",
        "glue2groupid=grid,o=glue"
    ));
    assert!(!is_under(
        "a=1,GLUE2GroupID=gridx,o=glue",
        "GLUE2GroupID=grid,o=glue"
    ));
    assert!(!is_under("o=glue", "GLUE2GroupID=grid,o=glue"));
}
