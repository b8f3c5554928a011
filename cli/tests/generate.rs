//! `accelfed generate` (hidden; scripts/package runs it): man pages and shell completions made from
//! the clap definition, one page per visible subcommand, and nothing of the hidden command itself.

use std::process::Command;

fn generate(what: &str, dir: &std::path::Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["generate", what])
        .arg(dir)
        .output()
        .expect("the binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

fn read(path: std::path::PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn man_pages_cover_every_visible_subcommand_with_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    generate("man", &man);
    let mut pages: Vec<String> = std::fs::read_dir(&man)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let expected = [
        "accelfed",
        "agent",
        "export",
        "init",
        "idle",
        "init-central",
        "meter",
        "provide",
        "query",
        "report",
        "serve",
        "ship",
        "spool",
        "spool-held",
        "spool-release",
        "token",
        "validate",
    ]
    .map(|name| match name {
        "accelfed" => "accelfed.1".to_owned(),
        sub => format!("accelfed-{sub}.1"),
    });
    let mut expected = expected.to_vec();
    expected.sort();
    assert_eq!(pages, expected);
    let provide = read(man.join("accelfed-provide.1"));
    assert!(
        provide.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        &provide[..80]
    );
    assert!(provide.contains("keep\\-last\\-good"));
    assert!(provide.contains("Exit status: 0 all published"));
    assert!(!read(man.join("accelfed.1")).contains("generate"));
    // The sections clap has no place for, before VERSION.
    for page in [
        "accelfed.1",
        "accelfed-meter.1",
        "accelfed-serve.1",
        "accelfed-init-central.1",
    ] {
        let text = read(man.join(page));
        for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES"] {
            assert!(text.contains(section), "{page} lacks {section}");
        }
        if let Some(version) = text.find(".SH VERSION") {
            assert!(
                text.find(".SH FILES").unwrap() < version,
                "{page}: FILES after VERSION"
            );
        }
    }
    let meter = read(man.join("accelfed-meter.1"));
    assert!(meter.contains("\\fBACCELFED_SPOOL\\fR"), "{meter}");
    assert!(
        meter.contains("/var/spool/accelfed/spool.sqlite"),
        "{meter}"
    );
    assert!(meter.contains("runuser(1)"), "{meter}");
    assert!(read(man.join("accelfed-serve.1")).contains("stopped cleanly"));
}

#[test]
fn completions_for_bash_zsh_and_fish_know_the_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    generate("completions", dir.path());
    for file in ["accelfed.bash", "_accelfed", "accelfed.fish"] {
        let script = read(dir.path().join(file));
        for sub in ["provide", "meter", "ship", "export", "serve"] {
            assert!(script.contains(sub), "{file} lacks {sub}");
        }
        assert!(
            script.contains("keep-last-good"),
            "{file} lacks --keep-last-good"
        );
        assert!(
            script.contains("log-format"),
            "{file} lacks the global --log-format"
        );
        assert!(
            !script.contains("generate"),
            "{file} offers the hidden generate"
        );
    }
    assert!(read(dir.path().join("_accelfed")).starts_with("#compdef accelfed"));
    // --format offers its values, not file names.
    let bash = read(dir.path().join("accelfed.bash"));
    assert!(
        bash.contains("glue21-json ldif-glue20 ldif-glue21 glue20-xml"),
        "bash completion of provide --format"
    );
    assert!(
        bash.contains("table csv json svg"),
        "bash completion of report --format"
    );
    let fish = read(dir.path().join("accelfed.fish"));
    assert!(
        fish.contains("ldif-glue20"),
        "fish completion of provide --format"
    );
}
