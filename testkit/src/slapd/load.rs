//! Loading LDIF with `ldapadd -c` and reading back what it did.
//!
//! `-c` goes on after a rejected entry, like a BDII update does; `-S` writes each rejected record
//! to a file with the server's reason as a comment, which gives every rejection its DN.

use std::fmt;
use std::process::Command;

use super::{ROOT_DN, ROOT_PW, Result, Slapd, SlapdError, install, io};

/// What a load did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadReport {
    /// Entries the server accepted.
    pub loaded: usize,
    /// Entries the server refused.
    pub rejected: usize,
    /// One line per rejected entry: `<dn>: <server's reason>`.
    pub errors: Vec<String>,
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loaded {} rejected {}", self.loaded, self.rejected)?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}

pub fn ldapadd(slapd: &Slapd, ldif: &[u8]) -> Result<LoadReport> {
    let input = tempfile::Builder::new()
        .prefix("load.")
        .suffix(".ldif")
        .tempfile_in(slapd.dir())
        .map_err(io("creating the LDIF file"))?;
    std::fs::write(input.path(), ldif)
        .map_err(io(format!("writing {}", input.path().display())))?;
    let rejects = slapd.dir().join(format!(
        "rejected.{}.ldif",
        input
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    let output = Command::new(install::LDAPADD)
        .args([
            "-c",
            "-x",
            "-H",
            slapd.url(),
            "-D",
            ROOT_DN,
            "-w",
            ROOT_PW,
            "-f",
        ])
        .arg(input.path())
        .arg("-S")
        .arg(&rejects)
        .output()
        .map_err(io(format!("running {}", install::LDAPADD)))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tried = stdout
        .lines()
        .filter(|line| line.starts_with("adding new entry"))
        .count();
    let refused = stderr
        .lines()
        .filter(|line| line.starts_with("ldap_add:"))
        .count();
    let rejected_text = std::fs::read_to_string(&rejects).unwrap_or_default();
    let errors = rejections(&rejected_text);

    if tried == 0 && !output.status.success() {
        return Err(SlapdError::Tool {
            tool: "ldapadd",
            url: slapd.url().to_owned(),
            status: output.status.to_string(),
            output: format!("{stdout}{stderr}"),
        });
    }
    let rejected = refused.max(errors.len());
    Ok(LoadReport {
        loaded: tried.saturating_sub(rejected),
        rejected,
        errors,
    })
}

/// `<dn>: <reason>` for each record of an `ldapadd -S` file (`# Error: ...` comment, then the
/// record; a base64 DN is shown as written).
fn rejections(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut reason = None;
    for line in text.lines() {
        if let Some(error) = line.strip_prefix("# Error: ") {
            reason = Some(error.to_owned());
        } else if let Some(dn) = line.strip_prefix("dn:") {
            let dn = dn.trim_start_matches(':').trim();
            out.push(format!(
                "{dn}: {}",
                reason.take().unwrap_or_else(|| "rejected".into())
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejections_pair_each_dn_with_its_reason() {
        let text = "# Error: Undefined attribute type (17), additional info: foo: attribute type undefined\n\
                    dn: GLUE2GroupID=x,o=glue\nobjectClass: GLUE2Group\nfoo: bar\n\n";
        assert_eq!(
            rejections(text),
            [
                "GLUE2GroupID=x,o=glue: Undefined attribute type (17), additional info: foo: attribute type undefined"
            ]
        );
    }
}
