//! A database location as an operator writes it (`[database] url`, `--database`): a PostgreSQL URL
//! or an SQLite file's path. Read once into [`DatabaseUrl`], whose `Display` and `Debug` never
//! show a password, so that every log line and error that names the database can name it whole.
//!
//! A password hides in three places, all masked: the URL's userinfo (`postgres://user:pw@host`,
//! where operators leave an `@` or `/` of the password unescaped, so the userinfo is taken to end at
//! the last `@` before the query), a `password=` parameter of the query string (libpq's form,
//! which tokio-postgres reads too), and the same `password=` in a key=value connection string
//! (`host=db password=pw`), which is not a URL and so would be taken for an SQLite path. The
//! scheme is matched whatever its case (RFC 3986, 3.1) and written back in lower case, the form
//! tokio-postgres requires.

use std::fmt;

/// What stands in for a password.
const MASK: &str = "***";

/// A database location; the password it may hold is shown only by [`Self::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    /// As given, with a PostgreSQL scheme written in lower case.
    text: String,
    postgres: bool,
}

impl DatabaseUrl {
    /// Reads `text`: a URL whose scheme is `postgres` or `postgresql` (any case) is PostgreSQL,
    /// anything else an SQLite path.
    pub fn new(text: &str) -> Self {
        match text.split_once("://") {
            Some((scheme, rest))
                if scheme.eq_ignore_ascii_case("postgres")
                    || scheme.eq_ignore_ascii_case("postgresql") =>
            {
                Self {
                    text: format!("{}://{rest}", scheme.to_ascii_lowercase()),
                    postgres: true,
                }
            }
            _ => Self {
                text: text.to_owned(),
                postgres: false,
            },
        }
    }

    /// Whether this is a PostgreSQL URL (else an SQLite path).
    pub fn is_postgres(&self) -> bool {
        self.postgres
    }

    /// The location with its password, for connecting only: never log or print it.
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// Whether the location holds a password (its file is then a secret).
    pub fn has_password(&self) -> bool {
        self.redacted() != self.text
    }

    /// The location with every password replaced by `***`.
    pub fn redacted(&self) -> String {
        // Parameters first: a `password=` value may hold the `?` that would otherwise end the
        // userinfo's search early, and masking it then exposed the userinfo to a second masking
        // (the database_url fuzz target: masking twice must change nothing).
        let text = mask_password_parameters(&self.text);
        if self.postgres {
            mask_userinfo(&text)
        } else {
            text
        }
    }
}

/// `text` with any password masked: [`DatabaseUrl::redacted`] for a location not kept as one.
pub fn redact(text: &str) -> String {
    DatabaseUrl::new(text).redacted()
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl<'de> serde::Deserialize<'de> for DatabaseUrl {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(deserializer).map(|text| Self::new(&text))
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({:?})", self.redacted())
    }
}

/// `scheme://user:pw@host...` with `pw` masked; the userinfo ends at the last `@` before the query
/// (a path with an `@` in it loses the part before it, which is the safe mistake).
fn mask_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let before_query = rest.find('?').unwrap_or(rest.len());
    let Some(at) = rest[..before_query].rfind('@') else {
        return url.to_owned();
    };
    let (userinfo, host) = (&rest[..at], &rest[at..]);
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:{MASK}{host}"),
        None => url.to_owned(),
    }
}

/// Every `password=value` (any case of the key, also `sslpassword=`) with its value masked; a value
/// ends at `&`, white space, or the closing quote of a quoted value.
fn mask_password_parameters(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find("password=") {
        let value_start = search + found + "password=".len();
        let quoted = text[value_start..].starts_with('\'');
        let token_end = |from: usize| {
            text[from..]
                .find(|c: char| c == '&' || c.is_whitespace())
                .map_or(text.len(), |end| from + end)
        };
        // Whatever is glued to a closing quote (`'s 3'='x'`) is masked with it: masking what was
        // masked changes nothing (the database_url fuzz target found the tail left behind).
        let value_end = if quoted {
            text[value_start + 1..]
                .find('\'')
                .map_or(text.len(), |end| token_end(value_start + 1 + end + 1))
        } else {
            token_end(value_start)
        };
        out.push_str(&text[copied..value_start]);
        out.push_str(MASK);
        copied = value_end;
        search = value_end.max(value_start);
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show_in_any_form_the_operator_may_write() {
        let cases = [
            (
                "postgres://acct:s3cret@db:5432/acc",
                "postgres://acct:***@db:5432/acc",
            ),
            (
                "POSTGRESQL://acct:s3cret@db/acc",
                "postgresql://acct:***@db/acc",
            ),
            (
                "PostgreS://acct:s3cret@db/acc",
                "postgres://acct:***@db/acc",
            ),
            // An `@` and a `/` left unescaped in the password.
            (
                "postgres://acct:s3c@r/et@db:5432/acc",
                "postgres://acct:***@db:5432/acc",
            ),
            (
                "postgres://acct@db/acc?sslmode=require&password=s3cret",
                "postgres://acct@db/acc?sslmode=require&password=***",
            ),
            (
                "postgres://acct@db/acc?PASSWORD=s3cret&sslmode=require",
                "postgres://acct@db/acc?PASSWORD=***&sslmode=require",
            ),
            (
                "host=db user=acct password=s3cret dbname=acc",
                "host=db user=acct password=*** dbname=acc",
            ),
            (
                "host=db password='s3 cret' dbname=acc",
                "host=db password=*** dbname=acc",
            ),
        ];
        for (given, shown) in cases {
            let url = DatabaseUrl::new(given);
            assert_eq!(url.to_string(), shown, "{given}");
            assert!(!format!("{url:?}").contains("s3"), "{url:?}");
            assert!(!redact(given).contains("s3"), "{given}");
        }
    }

    #[test]
    fn the_scheme_decides_postgres_whatever_its_case_and_is_lowered_for_connecting() {
        let url = DatabaseUrl::new("PostgreSQL://acct:pw@db/acc");
        assert!(url.is_postgres());
        assert_eq!(url.expose(), "postgresql://acct:pw@db/acc");
        let path = DatabaseUrl::new("/var/lib/accelfed/accounting.sqlite");
        assert!(!path.is_postgres());
        assert_eq!(path.to_string(), "/var/lib/accelfed/accounting.sqlite");
        assert!(!DatabaseUrl::new("mysql://u:p@db/x").is_postgres());
        assert!(url.has_password());
        assert!(!path.has_password());
        // No password: shown as given.
        assert_eq!(
            DatabaseUrl::new("postgres://postgres@127.0.0.1/x").to_string(),
            "postgres://postgres@127.0.0.1/x"
        );
    }
}
