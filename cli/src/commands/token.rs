//! `accelfed token`: a new random site token and the line that lets the central service accept it.

use std::path::Path;

use accelfed_central::{TokenHash, new_token};
use accelfed_schemas::names::SiteName;

use crate::args::TokenArgs;
use crate::exit::Outcome;

pub fn run(args: &TokenArgs) -> Outcome {
    let site = match site_name(&args.site) {
        Ok(site) => site,
        Err(err) => {
            tracing::error!("--site: {err}");
            return Outcome::Config;
        }
    };
    let token = match new_token() {
        Ok(token) => token,
        Err(err) => {
            tracing::error!("no randomness from the operating system: {err}");
            return Outcome::Partial;
        }
    };
    let hash = TokenHash::of(&token);
    // Everything that can be refused is checked before the token is written anywhere.
    let edited = match &args.add_to {
        Some(central) => match with_site(central, site.as_str(), hash) {
            Ok(text) => Some((central, text)),
            Err(message) => {
                tracing::error!("{message}");
                return Outcome::Config;
            }
        },
        None => None,
    };
    if let Err(outcome) = hand_out(args.output.as_deref(), &token) {
        return outcome;
    }
    match edited {
        Some((central, text)) => {
            if let Err(err) = crate::files::replace(central, text.as_bytes()) {
                tracing::error!("{err}");
                // The token was never accepted anywhere: take it back.
                if let Some(output) = &args.output {
                    let _ = std::fs::remove_file(output);
                }
                return Outcome::Partial;
            }
            tracing::info!(
                "added [sites.{}] to {} (`systemctl reload accelfed-serve`, or SIGHUP to `accelfed serve`, puts it in force)",
                toml_key(site.as_str()),
                central.display()
            );
        }
        // A block to paste into central.toml, not a log line: no time stamp or level in front.
        None => eprintln!(
            "# add to central.toml:\n[sites.{}]\ntoken_sha256 = \"{}\"",
            toml_key(site.as_str()),
            hash.to_hex()
        ),
    }
    Outcome::Ok
}

/// The site name as `serve` will read it back: valid, and with no invisible character.
pub(crate) fn site_name(name: &str) -> Result<SiteName, String> {
    let site = SiteName::new(name).map_err(|err| err.to_string())?;
    match invisible(site.as_str()) {
        Some(c) => Err(format!(
            "the name holds the invisible character U+{:04X}; a site name must read as what it is",
            u32::from(c)
        )),
        None => Ok(site),
    }
}

/// central.toml's text with the site's table, checked as `serve` reads it; errors name the file.
fn with_site(central: &Path, site: &str, hash: TokenHash) -> Result<String, String> {
    let named = |message: String| format!("--add-to {}: {message}", central.display());
    let text = std::fs::read_to_string(central).map_err(|err| named(err.to_string()))?;
    let edited = crate::central_toml::add_site(&text, site, hash).map_err(named)?;
    accelfed_central::CentralConfig::parse(central, &edited)
        .map_err(|err| format!("{err} (with the site added; fix the file, then run this again)"))?;
    Ok(edited)
}

/// The token to standard output, or to a new file only its owner reads.
fn hand_out(output: Option<&Path>, token: &str) -> Result<(), Outcome> {
    let Some(path) = output else {
        println!("{token}");
        return Ok(());
    };
    crate::files::create_new(path, format!("{token}\n").as_bytes(), 0o600).map_err(|err| {
        tracing::error!("--output {err}");
        match err {
            crate::files::WriteError::Exists(_) => Outcome::Config,
            crate::files::WriteError::Io(_) => Outcome::Partial,
        }
    })?;
    tracing::info!(
        "wrote the token to {} (0600; give it to the site)",
        path.display()
    );
    Ok(())
}

/// The site name as a TOML table key that `serve` reads back as the same name: bare where TOML
/// allows it, else a basic string with TOML's own escapes (Rust's `{:?}` escapes, such as
/// `\u{200b}`, are not TOML).
fn toml_key(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return name.to_owned();
    }
    let mut key = String::from("\"");
    for c in name.chars() {
        match c {
            '"' => key.push_str("\\\""),
            '\\' => key.push_str("\\\\"),
            c if c.is_control() => key.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => key.push(c),
        }
    }
    key.push('"');
    key
}

/// Characters that print as nothing (zero-width, bidirectional controls, byte-order mark): a site
/// name holding one cannot be told apart from another name by the operator who reads it.
fn invisible(name: &str) -> Option<char> {
    name.chars().find(|c| {
        matches!(u32::from(*c), 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0x00AD)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_becomes_a_key_toml_reads_back_as_the_same_name() {
        for name in [
            "CESNET-MCC",
            "site with space",
            "a\"quote",
            "back\\slash",
            "tab\there",
            "Zürich",
        ] {
            let text = format!("[sites.{}]\nx = 1\n", toml_key(name));
            let table: toml::Table =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let sites = table["sites"].as_table().unwrap();
            assert!(sites.contains_key(name), "{text}");
        }
    }

    #[test]
    fn invisible_characters_are_found() {
        assert_eq!(invisible("SITE\u{200b}A"), Some('\u{200b}'));
        // A bidirectional isolate (U+2066..U+2069) reorders what is shown and prints as nothing.
        assert_eq!(invisible("SITE\u{2067}A"), Some('\u{2067}'));
        assert_eq!(invisible("CESNET-MCC"), None);
    }
}
