//! The man pages' sections that clap has no place for: EXIT STATUS, ENVIRONMENT (every variable
//! an option of the page reads, from the clap definition, plus the logger's) and FILES (the
//! packaged paths the command reads or writes). Written as roff after clap_mangen's sections and
//! before its VERSION, where man-pages(7) puts them.

use std::fmt::Write as _;

/// Roff text with its hyphens and backslashes escaped (a bare `-` may be set as a hyphen, which
/// breaks copy and paste of option names and paths).
fn escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

/// The exit statuses of `command` (a subcommand's name; `accelfed` for the root page).
fn exit_status(command: &str) -> &'static [(&'static str, &'static str)] {
    match command {
        "serve" => &[
            ("0", "stopped cleanly (SIGTERM or SIGINT)."),
            ("1", "failed while running (a listener or the database)."),
            (
                "2",
                "configuration or usage error, TLS files included; nothing was started (the \
                 packaged unit does not restart on it).",
            ),
        ],
        "agent" => &[
            (
                "0",
                "stopped, or --once done; the state file holds every window read.",
            ),
            (
                "1",
                "no NVML library, no running NVIDIA driver, or no GPU (the message says which).",
            ),
            (
                "2",
                "usage error, an unreadable state file (kept as it is), or an endpoint that cannot \
                 be opened (the packaged unit does not restart on it).",
            ),
        ],
        "idle" => &[
            ("0", "listed (possibly nothing)."),
            ("1", "the agent on this node could not be read."),
            ("2", "usage error, or a --from file that cannot be read."),
        ],
        _ => &[
            ("0", "all good."),
            (
                "1",
                "finished, but a backend, a publisher or the repository failed, or records were \
                 refused; what worked was done, and nothing is lost (records stay in the spool).",
            ),
            (
                "2",
                "usage or configuration error (a wrong path, file, flag or user); nothing was \
                 done.",
            ),
        ],
    }
}

/// The packaged files `command` reads or writes, with what they are.
fn files(command: &str) -> Vec<(&'static str, &'static str)> {
    const SITE: (&str, &str) = (
        "/etc/accelfed/site.toml",
        "the site's configuration (--config).",
    );
    const CENTRAL: (&str, &str) = (
        "/etc/accelfed/central.toml",
        "the central service's configuration.",
    );
    const TOKEN: (&str, &str) = (
        "/etc/accelfed/token",
        "the site's token (owner accelfed, mode 0600).",
    );
    const SPOOL: (&str, &str) = (
        "/var/spool/accelfed/spool.sqlite",
        "the accounting spool (owner accelfed, mode 0600, in a 0750 folder that must exist); \
         run as root, accelfed refuses to write it and prints the runuser(1) line to use.",
    );
    const DOCUMENTS: (&str, &str) = (
        "/var/lib/accelfed/",
        "published documents (glue20.ldif, glue21.json, last-good copies) and the central \
         service's databases.",
    );
    const DOCS: (&str, &str) = (
        "/usr/share/doc/accelfed/",
        "operations.md and configuration.md: the guides behind this page.",
    );
    const AGENT_STATE: (&str, &str) = (
        "/var/lib/accelfed/agent-state.json",
        "the node agent's counters per holder and GPU (--state), rewritten atomically every period.",
    );
    let mut list = match command {
        "agent" | "idle" => vec![AGENT_STATE],
        "provide" | "validate" => vec![SITE, TOKEN, DOCUMENTS],
        "meter" => vec![SITE, SPOOL],
        "ship" | "export" => vec![SITE, TOKEN, SPOOL],
        "serve" | "init" | "init-central" | "token" | "report" | "query" => {
            vec![CENTRAL, DOCUMENTS]
        }
        _ => vec![SITE, CENTRAL, TOKEN, SPOOL, DOCUMENTS],
    };
    list.push(DOCS);
    list
}

/// The variables the logger reads, on every page.
const LOGGER: [(&str, &str); 2] = [
    (
        "RUST_LOG",
        "a tracing filter (such as accelfed=debug) that replaces the level -v and -q choose.",
    ),
    (
        "JOURNAL_STREAM",
        "set by systemd: when standard error is the journal, each line starts with its syslog \
         priority, so journalctl -p err finds every error.",
    ),
];

/// One `.TP` entry.
fn entry(out: &mut String, tag: &str, text: &str) {
    let _ = write!(out, ".TP\n\\fB{}\\fR\n{}\n", escape(tag), escape(text));
}

/// The three sections for the page of `command` (its clap definition, as built for the page).
pub fn render(command: &clap::Command, name: &str) -> String {
    let mut out = String::from(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in exit_status(name) {
        entry(&mut out, code, meaning);
    }
    out.push_str(".SH ENVIRONMENT\n");
    let mut variables: Vec<(String, String)> = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_string_lossy().into_owned();
            let long = arg
                .get_long()
                .map_or_else(String::new, |l| format!("--{l}"));
            Some((
                variable,
                format!("the value of {long} when it is not given."),
            ))
        })
        .collect();
    variables.sort();
    variables.dedup();
    for (variable, text) in &variables {
        entry(&mut out, variable, text);
    }
    for (variable, text) in LOGGER {
        entry(&mut out, variable, text);
    }
    out.push_str(".SH FILES\n");
    for (path, text) in files(name) {
        entry(&mut out, path, text);
    }
    out
}

/// `page` (clap_mangen's roff) with `sections` before its VERSION section, or at its end.
pub fn insert(page: &str, sections: &str) -> String {
    match page.find("\n.SH VERSION") {
        Some(at) => format!("{}\n{sections}{}", &page[..at], &page[at + 1..]),
        None if page.ends_with('\n') => format!("{page}{sections}"),
        None => format!("{page}\n{sections}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_go_before_the_version() {
        let page = ".TH x 1\n.SH NAME\nx\n.SH VERSION\nv1\n";
        let out = insert(page, ".SH FILES\n");
        assert_eq!(out, ".TH x 1\n.SH NAME\nx\n.SH FILES\n.SH VERSION\nv1\n");
        assert_eq!(insert(".TH x 1", ".SH FILES\n"), ".TH x 1\n.SH FILES\n");
    }

    #[test]
    fn environment_lists_the_options_variables_and_the_loggers() {
        let command = clap::Command::new("meter")
            .arg(clap::Arg::new("spool").long("spool").env("ACCELFED_SPOOL"));
        let text = render(&command, "meter");
        assert!(
            text.contains("\\fBACCELFED_SPOOL\\fR\nthe value of \\-\\-spool"),
            "{text}"
        );
        assert!(text.contains("RUST_LOG"), "{text}");
        assert!(text.contains("/var/spool/accelfed/spool.sqlite"), "{text}");
        assert!(text.starts_with(".SH \"EXIT STATUS\"\n"), "{text}");
    }
}
