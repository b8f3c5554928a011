//! The `accelfed` binary: parse arguments, set up logging, dispatch. The work happens in the
//! libraries; this crate only wires them to a command line.

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

/// A large site's document is hundreds of thousands of small strings built and dropped in one go;
/// glibc's allocator spent a third of the entity build freeing them (benches/render.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    telemetry::init(args.verbose, args.quiet, args.log_format);
    commands::run(args.command).into()
}
