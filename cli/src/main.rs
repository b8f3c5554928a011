//! The `accelfed` binary: parse arguments, set up logging, dispatch. The work happens in the
//! libraries; this crate only wires them to a command line.

mod args;
mod commands;
mod exit;
mod telemetry;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    telemetry::init(args.verbose, args.quiet);
    commands::run(args.command).into()
}
