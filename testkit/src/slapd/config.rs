//! The generated slapd.conf: schema includes, one mdb database for `o=glue`, the rootdn.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Result, SlapdError, io};

/// Schema files every instance loads, in order (GLUE20 needs core and cosine).
pub const BASE_SCHEMAS: [&str; 3] = [
    "/etc/ldap/schema/core.schema",
    "/etc/ldap/schema/cosine.schema",
    "/etc/ldap/schema/GLUE20.schema",
];

/// Writes `slapd.conf` and the database directory under `dir`; returns the config path.
pub fn write(dir: &Path, extra_schemas: &[&Path]) -> Result<PathBuf> {
    let db = dir.join("db");
    std::fs::create_dir_all(&db).map_err(io(format!("creating {}", db.display())))?;
    let mut conf = String::new();
    for schema in BASE_SCHEMAS
        .iter()
        .map(Path::new)
        .chain(extra_schemas.iter().copied())
    {
        let schema = std::fs::canonicalize(schema).map_err(|source| SlapdError::Io {
            action: format!("resolving schema {}", schema.display()),
            source,
        })?;
        let _ = writeln!(conf, "include {}", quoted(&schema));
    }
    let _ = writeln!(conf, "pidfile {}", quoted(&dir.join("slapd.pid")));
    let _ = writeln!(conf, "argsfile {}", quoted(&dir.join("slapd.args")));
    conf.push_str("modulepath /usr/lib/ldap\nmoduleload back_mdb\n");
    conf.push_str("database mdb\nmaxsize 104857600\n");
    let _ = writeln!(conf, "suffix \"{}\"", super::SUFFIX);
    let _ = writeln!(conf, "rootdn \"{}\"", super::ROOT_DN);
    let _ = writeln!(conf, "rootpw {}", super::ROOT_PW);
    let _ = writeln!(conf, "directory {}", quoted(&db));
    let path = dir.join("slapd.conf");
    std::fs::write(&path, conf).map_err(io(format!("writing {}", path.display())))?;
    Ok(path)
}

/// A path in double quotes, as slapd.conf wants paths that may contain spaces.
fn quoted(path: &Path) -> String {
    format!(
        "\"{}\"",
        path.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    )
}
