//! Names that look alike: `SITE-І` with a Cyrillic І (U+0406) beside `SITE-I` would be two sites in
//! the configuration, one token each, and one name on every page, report and log line that shows
//! them. A name's [`skeleton`] (after UTS #39, "Unicode Security Mechanisms", section 4) maps each
//! character that is drawn like a Latin letter to that letter; two names with one skeleton are
//! confusable.
//!
//! The table is the cross-script part of Unicode's `confusables.txt` for the Cyrillic and Greek
//! capitals and small letters drawn exactly as Latin ones, plus the fullwidth ASCII forms: the
//! look-alikes a site name (GOCDB: Latin letters, digits, `-` and `_`) can be spoofed with. It
//! leaves out the within-Latin pairs of the full data (`0`/`O`, `1`/`l`/`I`), which real
//! federations' names differ by (`SITE-1`, `SITE-I`), and needs no dependency (the
//! `unicode-security` crate holds the full data; it is not in this workspace's lock file).

/// Characters drawn as a Latin letter, and that letter.
const LOOK_ALIKES: &[(char, char)] = &[
    // Cyrillic capitals.
    ('\u{0405}', 'S'),
    ('\u{0406}', 'I'),
    ('\u{0408}', 'J'),
    ('\u{0410}', 'A'),
    ('\u{0412}', 'B'),
    ('\u{0415}', 'E'),
    ('\u{041A}', 'K'),
    ('\u{041C}', 'M'),
    ('\u{041D}', 'H'),
    ('\u{041E}', 'O'),
    ('\u{0420}', 'P'),
    ('\u{0421}', 'C'),
    ('\u{0422}', 'T'),
    ('\u{0425}', 'X'),
    ('\u{04AE}', 'Y'),
    ('\u{04C0}', 'I'),
    // Cyrillic small letters.
    ('\u{0430}', 'a'),
    ('\u{0435}', 'e'),
    ('\u{043E}', 'o'),
    ('\u{0440}', 'p'),
    ('\u{0441}', 'c'),
    ('\u{0443}', 'y'),
    ('\u{0445}', 'x'),
    ('\u{0455}', 's'),
    ('\u{0456}', 'i'),
    ('\u{0458}', 'j'),
    ('\u{04BB}', 'h'),
    // Greek capitals.
    ('\u{0391}', 'A'),
    ('\u{0392}', 'B'),
    ('\u{0395}', 'E'),
    ('\u{0396}', 'Z'),
    ('\u{0397}', 'H'),
    ('\u{0399}', 'I'),
    ('\u{039A}', 'K'),
    ('\u{039C}', 'M'),
    ('\u{039D}', 'N'),
    ('\u{039F}', 'O'),
    ('\u{03A1}', 'P'),
    ('\u{03A4}', 'T'),
    ('\u{03A5}', 'Y'),
    ('\u{03A7}', 'X'),
    // Greek small letters.
    ('\u{03BF}', 'o'),
    ('\u{03BD}', 'v'),
    // Hyphens and dashes drawn as `-`.
    ('\u{2010}', '-'),
    ('\u{2011}', '-'),
    ('\u{2012}', '-'),
    ('\u{2013}', '-'),
    ('\u{2212}', '-'),
];

/// The name as it is drawn: each look-alike replaced by the Latin letter it looks like, fullwidth
/// ASCII (U+FF01..U+FF5E) by ASCII.
pub fn skeleton(name: &str) -> String {
    name.chars()
        .map(|c| {
            if ('\u{FF01}'..='\u{FF5E}').contains(&c) {
                return char::from_u32(c as u32 - 0xFF01 + 0x21).unwrap_or(c);
            }
            LOOK_ALIKES
                .iter()
                .find(|(look_alike, _)| *look_alike == c)
                .map_or(c, |(_, latin)| *latin)
        })
        .collect()
}

/// Whether two different names are drawn alike.
pub fn confusable(a: &str, b: &str) -> bool {
    a != b && skeleton(a) == skeleton(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyrillic_greek_and_fullwidth_look_alikes_are_confusable() {
        // "SITE-І" with Cyrillic І (U+0406), "SІTE" with Greek Τ (U+03A4), fullwidth "ＳＩＴＥ".
        assert!(confusable("SITE-I", "SITE-\u{0406}"));
        assert!(confusable("SITE", "SI\u{03A4}E"));
        assert!(confusable("SITE", "\u{FF33}\u{FF29}\u{FF34}\u{FF25}"));
        assert!(confusable("CESNET-MCC", "\u{0421}ESNET\u{2013}MCC"));
        assert_eq!(skeleton("\u{0430}tl\u{0430}s"), "atlas");
    }

    #[test]
    fn names_that_differ_as_drawn_are_not() {
        assert!(!confusable("SITE-A", "SITE-A"), "one name is no pair");
        assert!(!confusable("SITE-1", "SITE-I"));
        assert!(!confusable("SITE-A", "SITE-B"));
        assert!(!confusable("Ünï", "Uni"));
    }
}
