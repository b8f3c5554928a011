//! HTML escaping and the page frame. Every text that comes from a site, a user or the repository
//! passes through [`escape`] before it reaches the page: a site or flavor named `<script>` shows as
//! those characters and never becomes an element.

use std::fmt::Write as _;

/// `text` with `& < > " '` as character references: safe in element content and in quoted
/// attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// The style sheet, inline: the page needs no other request, so it works without network access
/// and under a Content-Security-Policy that allows nothing else.
const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin:.5em 0 1.5em}\
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left}\
th{background:#f0f0f0}.stale{color:#a40000;font-weight:bold}.fresh{color:#006400}\
form{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:end;margin-bottom:1em}\
label{display:flex;flex-direction:column;font-size:.85em}.problem{color:#a40000}";

/// A whole document with `title` and `body` (already HTML).
pub fn page(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        escape(title)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_become_references() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("Ünï A100"), "Ünï A100");
    }

    #[test]
    fn the_title_is_escaped_too() {
        let html = page("<b>", "");
        assert!(html.contains("<title>&lt;b&gt;</title>"));
    }
}
