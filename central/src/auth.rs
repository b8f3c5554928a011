//! Site tokens. The configuration holds only each token's SHA-256 (tokens are 256 random bits, so
//! a plain hash cannot be reversed by guessing); a presented token is hashed and compared with
//! every site's hash in constant time, so neither the answer's timing nor an early exit tells an
//! attacker how much of a hash matched or which site it was close to.

use std::fmt;
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Deserializer};
use sha2::{Digest, Sha256};

use accelfed_schemas::names::SiteName;

/// The SHA-256 of a site's token.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenHash([u8; 32]);

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenHash(..)")
    }
}

impl TokenHash {
    /// The hash of `token` (surrounding whitespace ignored, as a token file ends in a newline).
    pub fn of(token: &str) -> Self {
        Self(Sha256::digest(token.trim().as_bytes()).into())
    }

    /// Parses 64 hex digits.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bytes = text.as_bytes();
        if text.starts_with('<') {
            // The examples' placeholder: there is no usable token in any example.
            return Err(format!(
                "token_sha256 is the placeholder {}: run `accelfed token --site NAME` and paste the \
                 token_sha256 line it prints",
                excerpt(text)
            ));
        }
        if bytes.len() != 64 {
            return Err(format!(
                "token_sha256 must be 64 hex digits (a SHA-256), got {} characters",
                bytes.len()
            ));
        }
        let mut hash = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let digit = |b: u8| (b as char).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(high), Some(low)) => hash[i] = (high * 16 + low) as u8,
                _ => return Err("token_sha256 must be 64 hex digits (a SHA-256)".to_owned()),
            }
        }
        let hash = Self(hash);
        if let Some(token) = TRIVIAL_TOKENS
            .iter()
            .find(|token| Self::of(token).ct_eq(&hash))
        {
            return Err(format!(
                "token_sha256 is the SHA-256 of {}, a token anyone can guess: run `accelfed token \
                 --site NAME` for a random one and paste the token_sha256 line it prints",
                if token.is_empty() {
                    "the empty string".to_owned()
                } else {
                    format!("{token:?}")
                }
            ));
        }
        Ok(hash)
    }

    /// Lower-case hex.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Equal in time that depends only on the length (fixed), never on where bytes differ.
    fn ct_eq(&self, other: &Self) -> bool {
        let mut difference = 0u8;
        for (a, b) in self.0.iter().zip(other.0.iter()) {
            difference |= a ^ b;
        }
        std::hint::black_box(difference) == 0
    }
}

impl<'de> Deserialize<'de> for TokenHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Tokens whose hash in a configuration means the site is open to anyone: the empty string (the
/// hash of an empty token file), 64 zeros (a placeholder of the right form, which `authenticate`
/// would take) and the words people put in examples and tests. `accelfed token` gives 256 random
/// bits; none of these is one.
const TRIVIAL_TOKENS: &[&str] = &[
    "",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "test",
    "token",
    "secret",
    "password",
    "changeme",
    "example",
];

/// The sites that may ship, by token hash. Clones share one set: [`Tokens::replace`] changes it
/// for every clone at once, which is how a reload (SIGHUP) reaches the gRPC ingest, the registry's
/// push and the report API without restarting them or dropping their connections.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    sites: Arc<RwLock<SiteHashes>>,
}

/// One set of sites and their token hashes, replaced whole.
type SiteHashes = Arc<[(SiteName, TokenHash)]>;

impl Tokens {
    pub fn new(sites: impl IntoIterator<Item = (SiteName, TokenHash)>) -> Self {
        Self {
            sites: Arc::new(RwLock::new(sites.into_iter().collect())),
        }
    }

    /// The set in force now: a call checks against one set, whatever a reload does meanwhile.
    fn current(&self) -> SiteHashes {
        match self.sites.read() {
            Ok(sites) => sites.clone(),
            // The set is replaced whole, so a panicking writer cannot leave half of one.
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Puts `other`'s sites in force for this set and every clone of it.
    pub fn replace(&self, other: &Tokens) {
        let sites = other.current();
        match self.sites.write() {
            Ok(mut current) => *current = sites,
            Err(poisoned) => *poisoned.into_inner() = sites,
        }
    }

    /// The site whose token this is. Every site's hash is compared (no early exit).
    pub fn site_for(&self, token: &str) -> Option<SiteName> {
        let presented = TokenHash::of(token);
        let mut found = None;
        for (site, hash) in self.current().iter() {
            if presented.ct_eq(hash) && found.is_none() {
                found = Some(site.clone());
            }
        }
        found
    }

    /// The first pair of sites that share a token hash: the second site's token would log in as
    /// the first, so `serve` refuses such a configuration.
    pub fn shared_hash(&self) -> Option<(SiteName, SiteName)> {
        let sites = self.current();
        sites.iter().enumerate().find_map(|(i, (first, hash))| {
            sites[i + 1..]
                .iter()
                .find(|(_, other)| other.ct_eq(hash))
                .map(|(second, _)| (first.clone(), second.clone()))
        })
    }

    /// Reads `authorization: Bearer <token>`; `None` without a well-formed header or for an
    /// unknown token. The scheme's name is case-insensitive (`bearer`, `BEARER`: RFC 9110, 11.1).
    /// A token not of `accelfed token`'s form (64 hex digits) is refused before any hash is
    /// computed or compared. The token is never logged.
    pub fn authenticate(&self, header: Option<&str>) -> Option<SiteName> {
        let (scheme, token) = header?.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let token = token.trim();
        if !is_token_form(token) {
            return None;
        }
        self.site_for(token)
    }
}

/// A value's excerpt for an error message, quoted.
fn excerpt(text: &str) -> String {
    format!("{:?}", accelfed_schemas::excerpt::excerpt(text))
}

/// Whether `token` has the form `accelfed token` gives: 64 hex digits (256 random bits). Anything
/// else (a word, a short test token) cannot be a site's token.
pub fn is_token_form(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A fresh random token: 32 bytes from the operating system, hex.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_finds_its_site_and_no_other() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        let tokens = Tokens::new([
            (SiteName::new("A").unwrap(), TokenHash::of(&a)),
            (SiteName::new("B").unwrap(), TokenHash::of(&b)),
        ]);
        assert_eq!(tokens.site_for(&a).unwrap().as_str(), "A");
        assert_eq!(
            tokens
                .authenticate(Some(&format!("Bearer {b}\n")))
                .unwrap()
                .as_str(),
            "B"
        );
        assert_eq!(tokens.site_for("wrong"), None);
        assert_eq!(tokens.shared_hash(), None);
        assert_eq!(tokens.authenticate(Some(&a)), None, "no Bearer prefix");
        for scheme in ["bearer", "BEARER", "bEaReR"] {
            assert_eq!(
                tokens
                    .authenticate(Some(&format!("{scheme} {a}")))
                    .map(|site| site.to_string()),
                Some("A".to_owned()),
                "{scheme}"
            );
        }
        assert_eq!(tokens.authenticate(Some(&format!("Basic {a}"))), None);
        assert_eq!(tokens.authenticate(Some(&format!("Bearerx {a}"))), None);
        assert_eq!(tokens.authenticate(Some("Bearer ")), None);
        assert_eq!(tokens.authenticate(None), None);
    }

    #[test]
    fn tokens_not_of_accelfeds_form_are_refused_even_when_their_hash_is_configured() {
        let tokens = Tokens::new([(SiteName::new("A").unwrap(), TokenHash::of("test"))]);
        assert_eq!(tokens.site_for("test").unwrap().as_str(), "A");
        assert_eq!(tokens.authenticate(Some("Bearer test")), None);
        assert!(!is_token_form(&"g".repeat(64)));
        assert!(is_token_form(&new_token().unwrap()));
    }

    #[test]
    fn two_sites_with_one_hash_are_found_and_named() {
        let token = new_token().unwrap();
        let tokens = Tokens::new([
            (SiteName::new("A").unwrap(), TokenHash::of(&token)),
            (
                SiteName::new("B").unwrap(),
                TokenHash::of(&new_token().unwrap()),
            ),
            (SiteName::new("C").unwrap(), TokenHash::of(&token)),
        ]);
        let (first, second) = tokens.shared_hash().unwrap();
        assert_eq!((first.as_str(), second.as_str()), ("A", "C"));
    }

    #[test]
    fn a_replaced_set_is_in_force_for_every_clone() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        let tokens = Tokens::new([(SiteName::new("A").unwrap(), TokenHash::of(&a))]);
        let held_by_a_listener = tokens.clone();
        tokens.replace(&Tokens::new([(
            SiteName::new("B").unwrap(),
            TokenHash::of(&b),
        )]));
        assert_eq!(held_by_a_listener.site_for(&a), None, "A was removed");
        assert_eq!(
            held_by_a_listener.site_for(&b).map(|site| site.to_string()),
            Some("B".to_owned())
        );
    }

    #[test]
    fn the_examples_placeholder_says_what_to_run() {
        let err = TokenHash::parse("<run: accelfed token --site EXAMPLE-GPU>").unwrap_err();
        assert!(err.contains("accelfed token --site NAME"), "{err}");
    }

    #[test]
    fn hashes_of_trivial_tokens_are_refused_naming_the_token() {
        // sha256("") and sha256("0" x 64), as `printf '' | sha256sum` and
        // `printf '%064d' 0 | sha256sum` print them.
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let zeros = "60e05bd1b195af2f94112fa7197a5c88289058840ce7c6df9693756bc6250f55";
        assert_eq!(TokenHash::of("").to_hex(), empty);
        assert_eq!(TokenHash::of(&"0".repeat(64)).to_hex(), zeros);
        let err = TokenHash::parse(empty).unwrap_err();
        assert!(
            err.starts_with("token_sha256 is the SHA-256 of the empty string, a token anyone"),
            "{err}"
        );
        let err = TokenHash::parse(&zeros.to_uppercase()).unwrap_err();
        assert!(
            err.contains(&format!("SHA-256 of \"{}\"", "0".repeat(64))),
            "{err}"
        );
        let err = TokenHash::parse(&TokenHash::of("changeme").to_hex()).unwrap_err();
        assert!(err.contains("\"changeme\""), "{err}");
        TokenHash::parse(&TokenHash::of(&new_token().unwrap()).to_hex()).unwrap();
    }

    #[test]
    fn hashes_parse_from_hex_and_print_back() {
        let hash = TokenHash::of("a site's token");
        assert_eq!(TokenHash::parse(&hash.to_hex()).unwrap(), hash);
        assert_eq!(
            TokenHash::parse(&hash.to_hex().to_uppercase()).unwrap(),
            hash
        );
        assert!(TokenHash::parse("xyz").is_err());
        assert!(TokenHash::parse(&"g".repeat(64)).is_err());
        assert_eq!(format!("{hash:?}"), "TokenHash(..)");
    }
}
