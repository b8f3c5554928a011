//! One file per subcommand.

mod provide;
mod report;
mod validate;

use crate::args::Command;
use crate::exit::Outcome;

pub fn run(command: Command) -> Outcome {
    match command {
        Command::Provide(args) => provide::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Report(args) => report::run(&args),
    }
}
