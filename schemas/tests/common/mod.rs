//! Helpers shared by the document tests.

use std::path::PathBuf;

/// Compares `actual` with the golden file `schemas/tests/golden/<name>`. With `UPDATE_GOLDEN=1` in
/// the environment the file is rewritten instead (review the diff before committing it).
pub fn assert_golden(name: &str, actual: &[u8]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("golden file is writable");
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|error| {
        panic!(
            "{}: {error}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let actual = String::from_utf8_lossy(actual);
        let expected = String::from_utf8_lossy(&expected);
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the rendering at line {}:\n  golden: {:?}\n  actual: {:?}\n\
             (UPDATE_GOLDEN=1 rewrites it)",
            path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line),
        );
    }
}
