//! What a pushed document must pass before it is stored: a size limit, JSON, the entity rules of
//! [`from_json`] (known classes and attributes, unique IDs, a tree), the JSON Schema shipped in
//! `schemas/json/glue21.schema.json`, the site (the AdminDomain must be the token's site) and the
//! document's consistency ([`super::consistency`]: IDs in the site's namespace, no association to
//! a missing entity, no part above its total), one meaning (no key twice in an object:
//! [`super::duplicate_keys`]), names as configuration takes them and, at the time of the push, sane
//! times ([`super::sanity`]).
//! Each refusal says what is wrong and where.

use accelfed_schemas::excerpt::shorten_quotes;
use accelfed_schemas::glue::from_json::{self, FromJsonError, ParsedDocument};
use serde_json::Value as Json;

use super::consistency::first_inconsistency;
use super::duplicate_keys::first_duplicate;
use super::sanity::{TimeLimits, check_names, check_times};

/// The schema every pushed document is checked against.
const SCHEMA: &str = include_str!("../../../schemas/json/glue21.schema.json");

/// Why a push was refused. The stored document of the site is untouched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rejection {
    #[error("document too large: {size} bytes, the limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    #[error(
        "duplicate key {key:?} at {line}:{column} (line:column): a key may appear once in an \
         object, as readers differ on which of two they keep"
    )]
    DuplicateKey {
        /// An excerpt of the key.
        key: String,
        line: usize,
        column: usize,
    },
    #[error("{0}")]
    Entities(#[from] FromJsonError),
    #[error(
        "too many entities: {count}, the limit is {limit} per document ([registry] max_entities)"
    )]
    TooManyEntities { count: usize, limit: usize },
    #[error("schema violation at {path}: {message}")]
    Schema { path: String, message: String },
    #[error("the document describes site {document:?} but the token belongs to site {token:?}")]
    WrongSite { document: String, token: String },
    #[error("{0}")]
    Inconsistent(String),
    /// A CreationTime in the future or a Validity past the maximum.
    #[error("{0}")]
    Time(String),
    /// An ID, Name or association that configuration would refuse.
    #[error("{0}")]
    Name(String),
}

/// The compiled schema and the size limit.
#[derive(Debug)]
pub struct Checker {
    validator: jsonschema::Validator,
    max_bytes: usize,
    max_entities: usize,
    time_limits: TimeLimits,
}

/// The most entities a document may hold, unless configured: a large cloud site with its
/// flavors, images and shares holds a few thousand.
pub const DEFAULT_MAX_ENTITIES: usize = 10_000;

/// Why the checker could not be built (the shipped schema is broken: a bug).
#[derive(Debug, thiserror::Error)]
#[error("the GLUE 2.1 JSON Schema does not compile: {0}")]
pub struct SchemaError(String);

impl Checker {
    pub fn new(max_bytes: usize) -> Result<Self, SchemaError> {
        let schema: Json =
            serde_json::from_str(SCHEMA).map_err(|error| SchemaError(error.to_string()))?;
        let validator = jsonschema::draft202012::new(&schema)
            .map_err(|error| SchemaError(error.to_string()))?;
        Ok(Self {
            validator,
            max_bytes,
            max_entities: DEFAULT_MAX_ENTITIES,
            time_limits: TimeLimits::default(),
        })
    }

    /// The same checker with another bound on a document's entities.
    pub fn with_max_entities(self, max_entities: usize) -> Self {
        Self {
            max_entities,
            ..self
        }
    }

    /// The same checker with other limits on a document's times.
    pub fn with_time_limits(self, time_limits: TimeLimits) -> Self {
        Self {
            time_limits,
            ..self
        }
    }

    /// [`Self::check`], then the document's times against `now`, the time of the push.
    pub fn check_at(
        &self,
        body: &[u8],
        token_site: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<ParsedDocument, Rejection> {
        let parsed = self.check(body, token_site)?;
        check_times(&parsed, now, self.time_limits)?;
        Ok(parsed)
    }

    /// Checks a document sent with `token_site`'s token.
    pub fn check(&self, body: &[u8], token_site: &str) -> Result<ParsedDocument, Rejection> {
        if body.len() > self.max_bytes {
            return Err(Rejection::TooLarge {
                size: body.len(),
                limit: self.max_bytes,
            });
        }
        if let Some(duplicate) = first_duplicate(body) {
            return Err(Rejection::DuplicateKey {
                key: duplicate.key,
                line: duplicate.line,
                column: duplicate.column,
            });
        }
        let json: Json = serde_json::from_slice(body)
            .map_err(|error| Rejection::InvalidJson(shorten_quotes(&error.to_string())))?;
        let parsed = from_json::from_value(&json)?;
        if parsed.entities.len() > self.max_entities {
            return Err(Rejection::TooManyEntities {
                count: parsed.entities.len(),
                limit: self.max_entities,
            });
        }
        if let Some(error) = self.validator.iter_errors(&json).next() {
            let path = error.instance_path.to_string();
            return Err(Rejection::Schema {
                path: if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                },
                // The validator quotes the offending value, which may be megabytes.
                message: shorten_quotes(&error.to_string()),
            });
        }
        if parsed.site() != token_site {
            return Err(Rejection::WrongSite {
                document: parsed.site().to_owned(),
                token: token_site.to_owned(),
            });
        }
        if let Some(why) = first_inconsistency(&parsed.entities, token_site) {
            return Err(Rejection::Inconsistent(why));
        }
        check_names(&parsed)?;
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::glue::sample;
    use accelfed_schemas::render::json;

    fn checker() -> Checker {
        Checker::new(1 << 20).unwrap()
    }

    #[test]
    fn a_rendered_document_passes() {
        let body = json::render(&sample::snapshot("S"));
        let parsed = checker().check(&body, "S").unwrap();
        assert_eq!(parsed.site(), "S");
    }

    #[test]
    fn bad_documents_are_refused_with_a_reason() {
        let good = json::document(&sample::snapshot("S"));
        let check = |json: &Json| {
            checker()
                .check(json.to_string().as_bytes(), "S")
                .unwrap_err()
        };

        assert!(matches!(
            checker().check(b"{\"AdminDomain\": [", "S"),
            Err(Rejection::InvalidJson(_))
        ));
        let mut json = good.clone();
        json["Spaceship"] = Json::Array(vec![]);
        assert_eq!(check(&json).to_string(), "unknown class \"Spaceship\"");

        let mut json = good.clone();
        json["Location"][0]["ID"] = json["Contact"][0]["ID"].clone();
        assert!(check(&json).to_string().contains("appears twice"));

        // A value of the right type that the schema still forbids.
        let mut json = good.clone();
        json["Location"][0]["Latitude"] = Json::from(123.0);
        let rejection = check(&json);
        assert!(
            matches!(&rejection, Rejection::Schema { path, .. } if path == "/Location/0/Latitude"),
            "{rejection}"
        );

        // A huge value where the schema wants another: the reason quotes an excerpt only.
        let mut json = good.clone();
        json["Location"][0]["Name"] = Json::from(vec![Json::from("7".repeat(200_000))]);
        let rejection = check(&json).to_string();
        assert!(rejection.len() < 400, "{}", &rejection[..400]);
        assert!(
            rejection.contains(&format!("{}...", "7".repeat(40))),
            "{rejection}"
        );
        let mut json = good.clone();
        json["x".repeat(200_000)] = Json::Array(vec![]);
        assert!(check(&json).to_string().len() < 100);

        let too_large = Checker::new(100).unwrap();
        assert!(matches!(
            too_large.check(&json::render(&sample::snapshot("S")), "S"),
            Err(Rejection::TooLarge { limit: 100, .. })
        ));
        let few = checker().with_max_entities(3);
        let rejection = few.check(&json::render(&sample::snapshot("S")), "S");
        assert!(
            matches!(rejection, Err(Rejection::TooManyEntities { limit: 3, .. })),
            "{rejection:?}"
        );
    }

    #[test]
    fn a_key_twice_in_an_object_is_refused_naming_it_and_its_place() {
        let body = json::render(&sample::snapshot("S"));
        let text = String::from_utf8(body).unwrap();
        // The rendered document's first object has `"ID"`; a second one before it means two IDs.
        let twice = text.replacen("\"ID\":", "\"ID\": \"shadow\", \"ID\":", 1);
        assert_ne!(twice, text);
        let rejection = checker().check(twice.as_bytes(), "S").unwrap_err();
        assert!(
            matches!(&rejection, Rejection::DuplicateKey { key, line, .. } if key == "ID" && *line >= 1),
            "{rejection}"
        );
        assert!(
            rejection
                .to_string()
                .starts_with("duplicate key \"ID\" at "),
            "{rejection}"
        );
    }

    #[test]
    fn another_sites_document_is_refused() {
        let body = json::render(&sample::snapshot("OTHER"));
        assert_eq!(
            checker().check(&body, "S").unwrap_err().to_string(),
            "the document describes site \"OTHER\" but the token belongs to site \"S\""
        );
    }
}
