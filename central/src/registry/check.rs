//! What a pushed document must pass before it is stored: a size limit, JSON, the entity rules of
//! [`from_json`] (known classes and attributes, unique IDs, a tree), the JSON Schema shipped in
//! `schemas/json/glue21.schema.json`, the site (the AdminDomain must be the token's site) and the
//! document's consistency ([`super::consistency`]: IDs in the site's namespace, no association to
//! a missing entity, no part above its total).
//! Each refusal says what is wrong and where.

use accelfed_schemas::excerpt::shorten_quotes;
use accelfed_schemas::glue::from_json::{self, FromJsonError, ParsedDocument};
use serde_json::Value as Json;

use super::consistency::first_inconsistency;

/// The schema every pushed document is checked against.
const SCHEMA: &str = include_str!("../../../schemas/json/glue21.schema.json");

/// Why a push was refused. The stored document of the site is untouched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rejection {
    #[error("document too large: {size} bytes, the limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    #[error("{0}")]
    Entities(#[from] FromJsonError),
    #[error("schema violation at {path}: {message}")]
    Schema { path: String, message: String },
    #[error("the document describes site {document:?} but the token belongs to site {token:?}")]
    WrongSite { document: String, token: String },
    #[error("{0}")]
    Inconsistent(String),
}

/// The compiled schema and the size limit.
#[derive(Debug)]
pub struct Checker {
    validator: jsonschema::Validator,
    max_bytes: usize,
}

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
        })
    }

    /// Checks a document sent with `token_site`'s token.
    pub fn check(&self, body: &[u8], token_site: &str) -> Result<ParsedDocument, Rejection> {
        if body.len() > self.max_bytes {
            return Err(Rejection::TooLarge {
                size: body.len(),
                limit: self.max_bytes,
            });
        }
        let json: Json = serde_json::from_slice(body)
            .map_err(|error| Rejection::InvalidJson(shorten_quotes(&error.to_string())))?;
        let parsed = from_json::from_value(&json)?;
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
