//! The registry's filters as LDAP search filters (RFC 4515), for `accelfed query --ldap`.
//!
//! Every value a user gives goes through [`escape`] before it enters a filter: `*`, `(`, `)`, `\`
//! and NUL become `\2a`, `\28`, `\29`, `\5c`, `\00`, so `A100)(objectClass=*` is searched for as
//! those characters and cannot add a term or widen a substring match.
//!
//! The server-side filter only narrows the answer (GLUE 2.0 attributes match case-exactly, and the
//! registry's model aliases cannot be spelled in LDAP); the entries that come back are turned into
//! offers and held to the registry's own [`Filter::matches`], so an LDAP answer and an HTTP
//! answer select by the same rules.

use std::borrow::Cow;
use std::collections::BTreeSet;

use accelfed_schemas::offer::Filter;

/// `value` escaped for use as an assertion value or a substring in a filter (RFC 4515, section 3).
pub fn escape(value: &str) -> Cow<'_, str> {
    ldap3::ldap_escape(value)
}

/// The spellings a case-insensitive word may have on a case-exact server.
fn spellings(word: &str) -> BTreeSet<String> {
    [word.to_owned(), word.to_uppercase(), word.to_lowercase()]
        .into_iter()
        .collect()
}

/// `(|(GLUE2EntityOtherInfo=GPU.*.<key>=*<spelling>*)...)`: some GPU's `key` contains `word` in
/// one of its spellings, each escaped.
fn gpu_fact_contains(key: &str, word: &str) -> String {
    let mut out = String::from("(|");
    for spelling in spellings(word) {
        out.push_str(&format!(
            "(GLUE2EntityOtherInfo=GPU.*.{key}=*{}*)",
            escape(&spelling)
        ));
    }
    out.push(')');
    out
}

/// The words of a model that name it (`A100`, `80GB`: those with a digit); vendor and family words
/// (`NVIDIA`, `Tesla`) are left to the registry's own matching, which drops them too.
fn model_words(model: &str) -> Vec<&str> {
    model
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|word| word.chars().any(|c| c.is_ascii_digit()))
        .collect()
}

/// Execution environments (GLUE 2.0: cloud flavors and batch node types) with GPU facts, narrowed
/// by the filter's model and vendor.
pub fn environments(filter: &Filter) -> String {
    let mut out =
        String::from("(&(objectClass=GLUE2ExecutionEnvironment)(GLUE2EntityOtherInfo=GPU.*)");
    if let Some(model) = &filter.model {
        for word in model_words(model) {
            out.push_str(&gpu_fact_contains("Model", word));
        }
    }
    if let Some(vendor) = &filter.vendor {
        out.push_str(&gpu_fact_contains("Vendor", vendor));
    }
    out.push(')');
    out
}

/// Mapping policies that name VOs; only the filter's VO when it has one.
pub fn policies(filter: &Filter) -> String {
    match &filter.vo {
        None => "(&(objectClass=GLUE2MappingPolicy)(GLUE2PolicyRule=VO:*))".to_owned(),
        Some(vo) => {
            let mut out = String::from("(&(objectClass=GLUE2MappingPolicy)(|");
            for spelling in spellings(vo) {
                out.push_str(&format!("(GLUE2PolicyRule=VO:{})", escape(&spelling)));
            }
            out.push_str("))");
            out
        }
    }
}

/// Shares, for the link from a policy to the environments it opens.
pub const SHARES: &str = "(objectClass=GLUE2Share)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_special_characters_are_escaped() {
        assert_eq!(escape("a*b(c)d\\e\0f"), "a\\2ab\\28c\\29d\\5ce\\00f");
        assert_eq!(escape("A100-SXM4"), "A100-SXM4");
    }

    #[test]
    fn a_model_narrows_by_its_words_with_digits_in_three_spellings() {
        let filter = Filter {
            model: Some("NVIDIA a100-80gb".into()),
            ..Filter::default()
        };
        assert_eq!(
            environments(&filter),
            "(&(objectClass=GLUE2ExecutionEnvironment)(GLUE2EntityOtherInfo=GPU.*)\
             (|(GLUE2EntityOtherInfo=GPU.*.Model=*A100*)(GLUE2EntityOtherInfo=GPU.*.Model=*a100*))\
             (|(GLUE2EntityOtherInfo=GPU.*.Model=*80GB*)(GLUE2EntityOtherInfo=GPU.*.Model=*80gb*)))"
        );
    }

    #[test]
    fn injection_attempts_stay_inside_their_assertion() {
        let filter = Filter {
            model: Some("A100*)(objectClass=*".into()),
            vendor: Some("x)(|(objectClass=*".into()),
            vo: Some("atlas)(GLUE2PolicyRule=*".into()),
            ..Filter::default()
        };
        for text in [environments(&filter), policies(&filter)] {
            // Balanced, and no parenthesis or star from the user survives unescaped: every `(`
            // opens a term we wrote.
            let opens = text.matches('(').count();
            assert_eq!(opens, text.matches(')').count(), "{text}");
            assert!(!text.contains("(objectClass=*"), "{text}");
            assert!(!text.contains("(GLUE2PolicyRule=*"), "{text}");
        }
        assert!(policies(&filter).contains("VO:atlas\\29\\28GLUE2PolicyRule=\\2a"));
    }

    #[test]
    fn without_a_vo_every_vo_rule_is_read() {
        assert_eq!(
            policies(&Filter::default()),
            "(&(objectClass=GLUE2MappingPolicy)(GLUE2PolicyRule=VO:*))"
        );
    }
}
