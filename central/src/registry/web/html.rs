//! The page frame and its Content-Security-Policy. Templates are [`maud`]'s: every text spliced in
//! (a site's, a user's, the repository's) is escaped when the page is built, so a site or flavor
//! named `<script>` shows as those characters and never becomes an element.
//!
//! The style sheet is the one inline `<style>`, allowed by its SHA-256 in the policy; there is no
//! script, no style attribute and no image but inline SVG, so the policy allows nothing else and
//! no request leaves the page.

use std::sync::LazyLock;

use base64::Engine as _;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::{Digest, Sha256};

/// The style sheet. Colours of chart series are SVG `fill` attributes, not CSS, so the policy
/// needs no `'unsafe-inline'`.
const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;\
padding:0 1em;color:#1f2328;background:#fff}\
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.3em;margin:1.6em 0 .4em;border-bottom:2px solid #e6e8eb;padding-bottom:.2em}\
h3{font-size:1.05em;margin:1.2em 0 .3em}\
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.92em}\
th,td{border-bottom:1px solid #e6e8eb;padding:.3em .7em;text-align:left}\
th{background:#f6f8fa;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.total td{font-weight:600;border-top:2px solid #d0d7de}\
.stale{color:#a40000;font-weight:600}.fresh{color:#116329}.muted{color:#57606a;font-size:.9em}\
form{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:end;margin-bottom:1em;\
background:#f6f8fa;padding:.8em;border-radius:6px}\
label{display:flex;flex-direction:column;font-size:.85em}.problem{color:#a40000}\
.cards{display:flex;flex-wrap:wrap;gap:.8em;margin:.6em 0}\
.card{border:1px solid #d0d7de;border-radius:8px;padding:.6em 1em;min-width:12em}\
.card .big{font-size:1.8em;font-weight:600}.card .model{font-weight:600}\
#free-stale .card{border-style:dashed;color:#57606a;background:#f6f8fa}\
figure.chart{margin:.5em 0}figure.chart svg{max-width:100%;height:auto}\
a.csv{display:inline-block;margin:.2em 0 1em;padding:.25em .7em;border:1px solid #0969da;\
border-radius:5px;color:#0969da;text-decoration:none;font-size:.9em}\
nav a{margin-right:1em}";

/// `'sha256-…'` of [`STYLE`], as the policy names it.
static STYLE_HASH: LazyLock<String> = LazyLock::new(|| {
    let digest = Sha256::digest(STYLE.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
});

/// The page's Content-Security-Policy: nothing but its own style sheet; the form posts back here.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src {}; form-action 'self'; base-uri 'none'; \
         frame-ancestors 'none'",
        *STYLE_HASH
    )
}

/// A whole document with `title` and `body`.
pub fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_escaped() {
        let html = page("<b>", html! {}).into_string();
        assert!(html.contains("<title>&lt;b&gt;</title>"), "{html}");
    }

    #[test]
    fn the_policy_names_the_style_sheet_by_its_hash_and_nothing_inline() {
        let policy = content_security_policy();
        assert!(policy.starts_with("default-src 'none'; style-src 'sha256-"));
        assert!(!policy.contains("unsafe-inline"));
        // The hash is of the sheet as it is sent.
        let html = page("t", html! {}).into_string();
        assert!(html.contains(&format!("<style>{STYLE}</style>")));
    }
}
