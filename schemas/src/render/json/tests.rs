use super::*;
use crate::glue::sample;

/// What serde_json's own pretty printer writes for the whole document.
fn serde_pretty(snapshot: &SiteSnapshot) -> Vec<u8> {
    let entities = snapshot.entities();
    let mut out = serde_json::to_vec_pretty(&Document::new(snapshot, &entities)).expect("JSON");
    out.push(b'\n');
    out
}

#[test]
fn pieces_give_the_bytes_of_serde_jsons_pretty_printer() {
    let snapshot = sample::snapshot("S");
    let expected = serde_pretty(&snapshot);
    assert!(render(&snapshot) == expected);
    for parts in [1, 2, 3, 50] {
        assert!(
            render_in(&snapshot, Some(parts)) == expected,
            "{parts} pieces"
        );
    }
}

#[test]
fn strings_that_need_escaping_are_escaped_as_serde_json_does() {
    let mut snapshot = sample::snapshot("Ünï \"S\" \\ site");
    snapshot.domain.description =
        Some(crate::names::Text::new("a \"quoted\" back\\slash é").expect("valid"));
    let rendered = render(&snapshot);
    assert!(rendered == serde_pretty(&snapshot));
    let text = String::from_utf8(rendered).expect("UTF-8");
    assert!(text.contains(r#"\"quoted\" back\\slash é"#), "{text}");
}
