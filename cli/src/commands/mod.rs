//! One file per subcommand.

mod accounting_site;
mod agent;
mod export;
mod generate;
mod idle;
mod idle_site;
mod init;
mod man_sections;
mod meter;
mod overrides;
mod provide;
mod provide_summary;
mod query;
mod query_registry;
mod report;
mod serve;
mod ship;
mod spool;
mod token;
mod validate;
mod validate_document;

use crate::args::Command;
use crate::exit::Outcome;

pub fn run(command: Command) -> Outcome {
    match command {
        Command::Provide(args) => provide::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Meter(args) => meter::run(&args),
        Command::Ship(args) => ship::run(&args),
        Command::Spool(args) => spool::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Query(args) => query::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Token(args) => token::run(&args),
        Command::Init(args) => init::run(&args),
        Command::Generate(args) => generate::run(&args),
        Command::Agent(args) => agent::run(&args),
        Command::Idle(args) => idle::run(&args),
    }
}

/// A current-thread runtime for one command's network IO.
fn runtime() -> Result<tokio::runtime::Runtime, Outcome> {
    started(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    )
}

/// A runtime whose two workers carry the network while the thread that runs `block_on` does
/// blocking work between awaits (`ship` reads and marks its SQLite spool while batches are on the
/// wire).
fn threaded_runtime() -> Result<tokio::runtime::Runtime, Outcome> {
    started(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build(),
    )
}

/// A runtime with a worker per core, for the central service.
fn service_runtime() -> Result<tokio::runtime::Runtime, Outcome> {
    started(
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    )
}

fn started(
    runtime: std::io::Result<tokio::runtime::Runtime>,
) -> Result<tokio::runtime::Runtime, Outcome> {
    runtime.map_err(|err| {
        tracing::error!("cannot start the async runtime: {err}");
        Outcome::Partial
    })
}
