//! What a PostgreSQL failure says, in one line. tokio-postgres displays every error the server
//! reported as just "db error" and keeps what an operator needs (the server's message, the
//! SQLSTATE code, the detail, the table and constraint) in a `DbError` one `source()` down; this
//! module brings it up. Both the accounting repository and the registry store use it, so their
//! errors read alike.

use accelfed_schemas::cause;
use tokio_postgres::error::DbError;

/// Characters of one field of the server's report (a detail may quote a whole failing row, and a
/// registry document in it may be megabytes) that a message shows.
const FIELD_CHARS: usize = 300;

/// `error` for a message or a log line: for an error the server reported, its severity, SQLSTATE
/// code, message, detail, hint and where it applies (schema, table, column, constraint); for any
/// other (a refused connection, a closed socket), the chain of causes.
pub fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => describe_db(db),
        None => cause::chain(error),
    }
}

fn describe_db(db: &DbError) -> String {
    let mut text = format!(
        "{} {}: {}",
        db.severity(),
        db.code().code(),
        one_line(db.message())
    );
    let mut about: Vec<String> = Vec::new();
    if let Some(detail) = db.detail() {
        about.push(format!("detail: {}", one_line(detail)));
    }
    if let Some(hint) = db.hint() {
        about.push(format!("hint: {}", one_line(hint)));
    }
    if let Some(table) = db.table() {
        let qualified = match db.schema() {
            Some(schema) => format!("{schema}.{table}"),
            None => table.to_owned(),
        };
        about.push(format!("table {}", one_line(&qualified)));
    }
    if let Some(column) = db.column() {
        about.push(format!("column {}", one_line(column)));
    }
    if let Some(constraint) = db.constraint() {
        about.push(format!("constraint {}", one_line(constraint)));
    }
    if !about.is_empty() {
        text.push_str(" (");
        text.push_str(&about.join("; "));
        text.push(')');
    }
    text
}

/// `field` on one line (a log line stays one line) and at most [`FIELD_CHARS`] characters.
fn one_line(field: &str) -> String {
    let flat: String = field
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(FIELD_CHARS) {
        Some((cut, _)) => format!("{}...", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_field_is_cut_and_kept_on_one_line() {
        let field = format!("Failing row contains (a\nb, {}).", "x".repeat(10_000));
        let shown = one_line(&field);
        assert!(
            shown.starts_with("Failing row contains (a b, xxx"),
            "{shown}"
        );
        assert!(shown.ends_with("..."), "{shown}");
        assert_eq!(shown.chars().count(), FIELD_CHARS + 3);
    }
}
