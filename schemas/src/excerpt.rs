//! Short quotes of outside text in error messages: a 10 MB value in a configuration, a record or a
//! pushed document must never make a 10 MB message (or log line). Everything that quotes a value
//! it was given, and every decoder message that may quote one (serde's `invalid type: string
//! "..."` and ``unknown field `...` ``), goes through here.

/// How many characters of a value an error shows.
pub const SHOWN_CHARS: usize = 40;

/// The first [`SHOWN_CHARS`] characters of `value`, with `...` when there is more.
pub fn excerpt(value: &str) -> String {
    match value.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}...", &value[..cut]),
        None => value.to_owned(),
    }
}

/// `message` with every `"quoted"` or `` `quoted` `` run longer than [`SHOWN_CHARS`] cut to its
/// excerpt; the rest of the message is kept as it is. For messages written by a decoder (serde,
/// toml) that quote the input they refuse.
pub fn shorten_quotes(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' && c != '`' {
            continue;
        }
        // Inside a quote: keep SHOWN_CHARS characters, skip the rest up to the closing quote
        // (a `\"` inside double quotes is an escaped quote, not the end).
        let mut shown = 0;
        let mut cut = false;
        let mut escaped = false;
        for inner in chars.by_ref() {
            let closes = inner == c && !escaped;
            escaped = c == '"' && inner == '\\' && !escaped;
            if closes {
                if cut {
                    out.push_str("...");
                }
                out.push(inner);
                break;
            }
            if shown < SHOWN_CHARS {
                out.push(inner);
                shown += 1;
            } else {
                cut = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_the_value_or_its_first_characters() {
        assert_eq!(excerpt("short"), "short");
        assert_eq!(excerpt(&"é".repeat(41)), format!("{}...", "é".repeat(40)));
    }

    #[test]
    fn long_quotes_are_cut_and_the_rest_of_the_message_kept() {
        let long = "x".repeat(10_000);
        let message = format!("invalid type: string \"{long}\", expected f64 at line 3");
        assert_eq!(
            shorten_quotes(&message),
            format!(
                "invalid type: string \"{}...\", expected f64 at line 3",
                "x".repeat(40)
            )
        );
        let message = format!("unknown field `{long}`, expected one of `name`, `www`");
        assert_eq!(
            shorten_quotes(&message),
            format!(
                "unknown field `{}...`, expected one of `name`, `www`",
                "x".repeat(40)
            )
        );
        let short = "unknown variant \"GPX\", expected \"GPU\"";
        assert_eq!(shorten_quotes(short), short);
    }

    #[test]
    fn escaped_quotes_stay_inside_and_an_unclosed_quote_is_cut_too() {
        let inner = format!("a\\\"{}", "b".repeat(100));
        let shortened = shorten_quotes(&format!("value \"{inner}\" refused"));
        assert!(shortened.ends_with("...\" refused"), "{shortened}");
        assert!(shortened.starts_with("value \"a\\\"bbb"), "{shortened}");
        let unclosed = shorten_quotes(&format!("value \"{}", "c".repeat(100)));
        assert_eq!(unclosed, format!("value \"{}", "c".repeat(40)));
    }
}
