//! `accelfed generate man|completions DIR` (hidden): documentation made from the clap definition
//! itself, so the packaged man pages and shell completions can never disagree with the binary.

use std::path::Path;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::args::{Args, GenerateArgs, Generated};
use crate::exit::Outcome;

/// The shells whose completions the packages carry.
const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

pub fn run(args: &GenerateArgs) -> Outcome {
    let written = std::fs::create_dir_all(&args.dir).and_then(|()| match args.what {
        Generated::Man => man_pages(&args.dir),
        Generated::Completions => completions(&args.dir),
    });
    match written {
        Ok(()) => Outcome::Ok,
        Err(err) => {
            tracing::error!("cannot write into {}: {err}", args.dir.display());
            Outcome::Partial
        }
    }
}

/// `accelfed.1` and one page per visible subcommand (`accelfed-provide.1`, ...), as
/// `clap_mangen::generate_to` names them, each with EXIT STATUS, ENVIRONMENT and FILES
/// ([`super::man_sections`]).
fn man_pages(dir: &Path) -> std::io::Result<()> {
    let mut command = Args::command().disable_help_subcommand(true);
    command.build();
    man_page_tree(command, "accelfed", dir)
}

/// The page of `command` (`name`: the subcommand's own name, for the sections) and those of its
/// visible subcommands.
fn man_page_tree(command: clap::Command, name: &str, dir: &Path) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_name = match name {
            "accelfed" => sub.get_name().to_owned(),
            parent => format!("{parent}-{}", sub.get_name()),
        };
        man_page_tree(sub.clone(), &sub_name, dir)?;
    }
    let sections = super::man_sections::render(&command, name);
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render(&mut page)?;
    let page = super::man_sections::insert(&String::from_utf8_lossy(&page), &sections);
    std::fs::write(dir.join(man.get_filename()), page)
}

/// One completion script per shell, under the names each shell's packaged folder expects:
/// `accelfed.bash`, `_accelfed` and `accelfed.fish`.
fn completions(dir: &Path) -> std::io::Result<()> {
    let mut command = visible_command();
    for shell in SHELLS {
        clap_complete::generate_to(shell, &mut command, "accelfed", dir)?;
    }
    Ok(())
}

/// The command line as a user sees it in `--help`: clap_complete would also offer the hidden
/// subcommands (this one), so the root is rebuilt with the visible ones only. Its options are
/// global, so they reach every subcommand again when clap builds the copy.
fn visible_command() -> clap::Command {
    let full = Args::command();
    let visible: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .cloned()
        .collect();
    clap::Command::new("accelfed")
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .args(full.get_arguments().cloned())
        .subcommands(visible)
}
