//! The `accelfed` binary: parse arguments, set up logging, dispatch. The work happens in the
//! libraries; this crate only wires them to a command line.

mod allocator;
mod args;
mod central_toml;
mod commands;
mod exit;
mod files;
mod journal;
mod pki;
mod progress;
mod site_file;
mod telemetry;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    telemetry::init(args.verbose, args.quiet, args.log_format);
    commands::run(args.command).into()
}
