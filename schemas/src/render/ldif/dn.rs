//! Distinguished names, all of their handling in one place: RFC 4514 escaping of attribute values,
//! the DN of each entry, and reading DNs back (RDNs, the comparison key of two spellings).
//!
//! Site names and IDs come from operators and middleware, so any of `,+"\<>;=` may appear in them;
//! an unescaped comma would silently move an entry to another place in the DIT (or make ldapadd
//! refuse it). Specials are written as the hex pairs slapd itself prints a DN with (`\2C`, `\22`,
//! ...): a BDII or the LDAP publisher compares the DNs it wrote with those slapd returns, and a DN
//! spelled `a\,b` by us and `a\2Cb` by slapd would look like a different entry on every update.
//! Non-ASCII characters are kept as UTF-8, as slapd keeps them (RFC 4514 allows it): the LDIF
//! writer then base64-encodes the whole `dn` line, as RFC 2849 requires.

/// The DN every rendering hangs the services under (the LDIF does not create it; a BDII does).
pub const SUFFIX: &str = "o=glue";

/// The group entry the services live in, as BDII's GLUE2 layout has it.
pub const RESOURCE_GROUP: &str = "GLUE2GroupID=resource,o=glue";

/// The longest RDN, in bytes, that an entry may have: slapd's back-mdb (Debian's BDII and accelfed's
/// LDAP view run on it) keeps an entry's RDN twice, as written and normalized, in one LMDB value of
/// at most 511 bytes, and refuses the entry ("Other (e.g., implementation specific) error (80)")
/// when they do not fit. Measured with slapd 2.5: an RDN of 243 bytes loads, one of 247 does not.
pub const MAX_RDN_BYTES: usize = 240;

/// The RDN of an entity in either LDIF mode is at most as long as this: its class's own ID
/// attribute (`GLUE2<Class>ID`, never shorter than the attribute the LDIF keys it by, such as
/// `GLUE2ShareID`), `=`, and the escaped ID.
pub fn rdn_bytes_at_most(class_name: &str, id: &str) -> usize {
    "GLUE2".len() + class_name.len() + "ID=".len() + escape_value(id).len()
}

/// Escapes one attribute value for use in an RDN (RFC 4514, section 2.4), the way OpenLDAP's slapd
/// prints it: `,+"\<>;=` as `\2C \2B \22 \5C \3C \3E \3B \3D`, a leading `#` as `\23`, a leading or
/// trailing space as `\20`, NUL as `\00`.
///
/// `=` is not required to be escaped by the RFC but slapd escapes it, and some older LDAP tools
/// split RDNs on the first unescaped `=`.
pub fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    push_escaped(&mut out, value);
    out
}

/// Appends [`escape_value`] of `value` to `out`.
pub fn push_escaped(out: &mut String, value: &str) {
    // IDs almost never need escaping: copy them in one go.
    if needs_escaping(value) {
        escape_each(out, value);
    } else {
        out.push_str(value);
    }
}

/// The escaping itself, character by character.
fn escape_each(out: &mut String, value: &str) {
    let last = value.chars().count().saturating_sub(1);
    for (index, ch) in value.chars().enumerate() {
        let hex = match ch {
            ',' => "\\2C",
            '+' => "\\2B",
            '"' => "\\22",
            '\\' => "\\5C",
            '<' => "\\3C",
            '>' => "\\3E",
            ';' => "\\3B",
            '=' => "\\3D",
            '\0' => "\\00",
            '#' if index == 0 => "\\23",
            ' ' if index == 0 || index == last => "\\20",
            _ => {
                out.push(ch);
                continue;
            }
        };
        out.push_str(hex);
    }
}

/// Whether [`push_escaped`] changes `value`. Bytes suffice: every character it escapes is ASCII,
/// and no byte of a multi-byte UTF-8 character is.
fn needs_escaping(value: &str) -> bool {
    let bytes = value.as_bytes();
    matches!(bytes.first(), Some(b'#' | b' '))
        || bytes.last() == Some(&b' ')
        || bytes.iter().any(|byte| {
            matches!(
                byte,
                b',' | b'+' | b'"' | b'\\' | b'<' | b'>' | b';' | b'=' | b'\0'
            )
        })
}

/// `attr=escaped value,parent`.
pub fn child(attribute: &str, value: &str, parent: &str) -> String {
    let mut dn = String::with_capacity(attribute.len() + value.len() + parent.len() + 2);
    push_child(&mut dn, attribute, value, parent);
    dn
}

/// Appends [`child`] to `dn`.
pub fn push_child(dn: &mut String, attribute: &str, value: &str, parent: &str) {
    dn.push_str(attribute);
    dn.push('=');
    push_escaped(dn, value);
    dn.push(',');
    dn.push_str(parent);
}

/// Why [`unescape_value`] refused its input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DnError {
    #[error("DN value {0:?} ends in a lone backslash")]
    TrailingBackslash(String),
    #[error("DN value {0:?} has an invalid hex escape")]
    BadHex(String),
    #[error("DN value {0:?} decodes to invalid UTF-8")]
    NotUtf8(String),
}

/// Reverses [`escape_value`] (and any RFC 4514 escaping: `\XX` hex pairs included), so tests and
/// consumers can read a site's name back from a DN.
pub fn unescape_value(value: &str) -> Result<String, DnError> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] != b'\\' {
            out.push(bytes[index]);
            index += 1;
            continue;
        }
        let Some(&next) = bytes.get(index + 1) else {
            return Err(DnError::TrailingBackslash(value.to_owned()));
        };
        if next.is_ascii_hexdigit() {
            let pair = bytes
                .get(index + 1..index + 3)
                .ok_or_else(|| DnError::BadHex(value.to_owned()))?;
            let text = std::str::from_utf8(pair).map_err(|_| DnError::BadHex(value.to_owned()))?;
            let byte =
                u8::from_str_radix(text, 16).map_err(|_| DnError::BadHex(value.to_owned()))?;
            out.push(byte);
            index += 3;
        } else {
            out.push(next);
            index += 2;
        }
    }
    String::from_utf8(out).map_err(|_| DnError::NotUtf8(value.to_owned()))
}

/// The value of a DN's first RDN, unescaped (`GLUE2DomainID=a\,b,o=glue` gives `a,b`).
pub fn first_rdn_value(dn: &str) -> Result<String, DnError> {
    let mut start = None;
    let mut end = dn.len();
    for (index, ch) in unescaped(dn) {
        match ch {
            '=' if start.is_none() => start = Some(index + 1),
            ',' | '+' if start.is_some() => {
                end = index;
                break;
            }
            _ => {}
        }
    }
    unescape_value(&dn[start.unwrap_or(0)..end])
}

/// The RDNs of a DN, outermost last, split at unescaped commas (values stay escaped). Spaces
/// around an RDN (which RFC 2253 allowed after a comma) are dropped; nothing else is: a value's
/// own leading or trailing space is escaped (`\20`, `\ `), and any other white space or control
/// character at its edge (a pushed ID may end in a tab or a newline) is part of the value.
pub fn rdns(dn: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (index, ch) in unescaped(dn) {
        if ch == ',' {
            out.push(trim_rdn(&dn[start..index]));
            start = index + 1;
        }
    }
    let last = trim_rdn(&dn[start..]);
    if !out.is_empty() || !last.is_empty() {
        out.push(last);
    }
    out
}

/// The characters of a DN that no backslash escapes, with their byte positions; backslashes and
/// the characters they escape are left out, so a caller sees only the DN's real separators.
fn unescaped(dn: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut escaped = false;
    dn.char_indices().filter(move |&(_, ch)| {
        let plain = !escaped && ch != '\\';
        escaped = !escaped && ch == '\\';
        plain
    })
}

/// `rdn` without the spaces around it, keeping an escaped trailing space (`a\ `).
fn trim_rdn(rdn: &str) -> &str {
    let mut rdn = rdn.trim_start_matches(' ');
    while let Some(rest) = rdn.strip_suffix(' ') {
        let backslashes = rest.bytes().rev().take_while(|&byte| byte == b'\\').count();
        if backslashes % 2 == 1 {
            break;
        }
        rdn = rest;
    }
    rdn
}

/// How many RDNs `dn` has: a parent always has fewer than its children.
pub fn depth(dn: &str) -> usize {
    rdns(dn).len()
}

/// A DN in a form two spellings of the same name share: attribute types lower-cased, values
/// unescaped (GLUE2 values compare case-exactly, so their case is kept). A value that does not
/// unescape is kept as written: it can then only equal itself.
pub fn dn_key(dn: &str) -> String {
    let mut key = String::with_capacity(dn.len());
    for (index, rdn) in rdns(dn).into_iter().enumerate() {
        if index > 0 {
            // A character no unescaped value can hold is a safe separator.
            key.push('\u{1}');
        }
        match rdn.split_once('=') {
            Some((kind, value)) => {
                key.push_str(&kind.trim().to_ascii_lowercase());
                key.push('=');
                match unescape_value(value) {
                    Ok(value) => key.push_str(&value),
                    Err(_) => key.push_str(value),
                }
            }
            None => key.push_str(rdn),
        }
    }
    key
}

/// Whether `dn` is `base` or lies under it.
pub fn is_under(dn: &str, base: &str) -> bool {
    let dn = rdns(dn);
    let base = rdns(base);
    dn.len() >= base.len()
        && dn[dn.len() - base.len()..]
            .iter()
            .zip(&base)
            .all(|(a, b)| dn_key(a) == dn_key(b))
}

#[cfg(test)]
mod tests;
