//! Keep-last-good (`provide --keep-last-good FILE`): what FILE was saved as. The format and, for LDIF, the DIT
//! layout are recorded beside it in `FILE.format` (`format=ldif-glue21 dit=site`), because the
//! document alone cannot always tell: a GLUE 2.1 LDIF of a site without accelerators uses only
//! GLUE 2.0 classes, and both layouts start with the same domain entry. A saved document reaches a
//! consumer only when its record says it is what this run would have published, so a BDII set up
//! for GLUE 2.0 never gets 2.1 classes its schema lacks, nor a site BDII entries outside its
//! subtree.
//!
//! A document without a record (saved by an accelfed before the record existed) is checked by its
//! content: whatever that can tell apart is still refused, and a warning says the check was
//! partial (the report says so: [`Checked::ByContentOnly`]).

use std::path::{Path, PathBuf};

use accelfed_schemas::render::Format;

use crate::Destination;
use accelfed_schemas::render::ldif::Dit;

/// What a document is: its format and, for LDIF, its DIT layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedAs {
    pub format: Format,
    pub dit: Dit,
}

impl SavedAs {
    fn is_ldif(self) -> bool {
        matches!(self.format, Format::LdifGlue20 | Format::LdifGlue21)
    }

    /// The record's line: `format=glue21-json`, `format=ldif-glue20 dit=resource`.
    fn record(self) -> String {
        if self.is_ldif() {
            format!("format={} dit={}", self.format, self.dit.as_str())
        } else {
            format!("format={}", self.format)
        }
    }
}

/// `FILE.format`, where the record of FILE is kept.
pub fn record_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".format");
    PathBuf::from(name)
}

/// How a saved document was found fit to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Its record says it is what this run publishes.
    ByRecord,
    /// It has no record (saved by an older accelfed): only its content was checked, so the caller
    /// warns that the check was partial. `record` is where the next complete run writes it.
    ByContentOnly { record: PathBuf },
}

/// Saves `document` to `path` and its record beside it. The old record goes first, so a run cut
/// short between the two writes leaves a document without a record (checked by content), never a
/// record that describes another document.
pub async fn save(path: &Path, document: &[u8], saved_as: SavedAs) -> Result<(), String> {
    let record = record_path(path);
    match std::fs::remove_file(&record) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(format!("{}: {err}", record.display())),
    }
    write(path, document).await?;
    write(&record, format!("{}\n", saved_as.record()).as_bytes()).await
}

/// Replaces the file `to` as every file destination is (atomically).
async fn write(to: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::publish(bytes, &Destination::File(to.to_owned()))
        .await
        .map(|_| ())
        .map_err(|err| err.to_string())
}

/// Whether the document saved at `path` is one this run may publish in its place (`wanted`).
pub fn check(path: &Path, document: &[u8], wanted: SavedAs) -> Result<Checked, String> {
    let record = record_path(path);
    match std::fs::read_to_string(&record) {
        Ok(found) if found.trim() == wanted.record() => Ok(Checked::ByRecord),
        Ok(found) => Err(mismatch(&record, found.trim(), wanted)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            by_content(document, wanted)?;
            Ok(Checked::ByContentOnly { record })
        }
        Err(err) => Err(format!("{}: {err}", record.display())),
    }
}

/// Why a recorded document is not what this run publishes.
fn mismatch(record: &Path, found: &str, wanted: SavedAs) -> String {
    let format = format!("format={}", wanted.format);
    let what = if found.split_whitespace().next() == Some(format.as_str()) {
        format!("it is not in the {} DIT layout", wanted.dit.as_str())
    } else {
        format!("it is not a {} document", wanted.format)
    };
    format!(
        "{what}: {} says it was saved as `{found}` (keep one file per format and DIT layout)",
        record.display()
    )
}

/// What the content alone can tell: the kind of document, GLUE 2.1 classes, and the layout of
/// the DNs.
fn by_content(document: &[u8], wanted: SavedAs) -> Result<(), String> {
    let text = String::from_utf8_lossy(document);
    let start = text.trim_start();
    let kind_fits = match wanted.format {
        Format::Glue21Json => start.starts_with('{'),
        Format::LdifGlue20 | Format::LdifGlue21 => start.starts_with("dn:"),
        Format::Glue20Xml => start.starts_with('<'),
    };
    if !kind_fits {
        return Err(format!(
            "it is not a {} document (keep one file per format)",
            wanted.format
        ));
    }
    if !wanted.is_ldif() {
        return Ok(());
    }
    // LDIF folds long lines: a line that starts with a space continues the one before.
    let unfolded = text.replace("\n ", "");
    if wanted.format == Format::LdifGlue20 && has_glue21_classes(&unfolded) {
        return Err(format!(
            "it holds GLUE 2.1 classes, so it is not a {} document (keep one file per format)",
            wanted.format
        ));
    }
    match (wanted.dit, layout(&unfolded)) {
        (wanted_dit, Some(found)) if found != wanted_dit => Err(format!(
            "its entries are in the {} layout, and this run publishes the {} layout (--dit)",
            found.as_str(),
            wanted_dit.as_str()
        )),
        _ => Ok(()),
    }
}

/// Whether an object class that GLUE 2.0 lacks appears: every class accelfed's GLUE 2.1 schema
/// adds is an accelerator or cloud class.
fn has_glue21_classes(ldif: &str) -> bool {
    ldif.lines()
        .filter_map(|line| line.strip_prefix("objectClass:"))
        .map(str::trim)
        .any(|class| class.contains("Accelerator") || class.starts_with("GLUE2CloudComputing"))
}

/// The DIT layout the DNs show: services under `GLUE2GroupID=resource,o=glue` (resource) or
/// under `GLUE2GroupID=resource,GLUE2DomainID=<site>,o=glue` (site); `None` when neither shows.
fn layout(ldif: &str) -> Option<Dit> {
    let dns = ldif.lines().filter_map(|line| line.strip_prefix("dn:"));
    for dn in dns {
        let dn = dn.trim();
        if dn.ends_with("GLUE2GroupID=resource,o=glue") {
            return Some(Dit::Resource);
        }
        if dn.contains("GLUE2GroupID=resource,GLUE2DomainID=") {
            return Some(Dit::Site);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESOURCE_20: &str = "dn: GLUE2DomainID=S,o=glue\nobjectClass: GLUE2Domain\n\n\
        dn: GLUE2GroupID=resource,o=glue\nobjectClass: GLUE2Group\n\n\
        dn: GLUE2ServiceID=urn:s,GLUE2GroupID=reso\n urce,o=glue\nobjectClass: GLUE2Service\n";

    fn ldif(format: Format, dit: Dit) -> SavedAs {
        SavedAs { format, dit }
    }

    #[test]
    fn the_record_names_the_layout_only_for_ldif() {
        assert_eq!(
            ldif(Format::LdifGlue21, Dit::Site).record(),
            "format=ldif-glue21 dit=site"
        );
        assert_eq!(
            ldif(Format::Glue21Json, Dit::Site).record(),
            "format=glue21-json"
        );
        assert_eq!(
            record_path(Path::new("/var/lib/accelfed/last.ldif")),
            Path::new("/var/lib/accelfed/last.ldif.format")
        );
    }

    #[test]
    fn content_tells_the_layout_and_glue21_classes_apart() {
        assert!(
            by_content(
                RESOURCE_20.as_bytes(),
                ldif(Format::LdifGlue20, Dit::Resource)
            )
            .is_ok()
        );
        let site = by_content(RESOURCE_20.as_bytes(), ldif(Format::LdifGlue20, Dit::Site));
        assert!(
            site.as_ref().is_err_and(|e| e.contains("resource layout")),
            "{site:?}"
        );
        let glue21 = RESOURCE_20.replace(
            "objectClass: GLUE2Service\n",
            "objectClass: GLUE2Service\nobjectClass: GLUE2ComputingManagerAccelerator\n",
        );
        let refused = by_content(glue21.as_bytes(), ldif(Format::LdifGlue20, Dit::Resource));
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("GLUE 2.1 classes")),
            "{refused:?}"
        );
        assert!(by_content(glue21.as_bytes(), ldif(Format::LdifGlue21, Dit::Resource)).is_ok());
        assert!(by_content(b"{}", ldif(Format::LdifGlue21, Dit::Resource)).is_err());
    }
}
