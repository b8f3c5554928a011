//! `accelfed provide`: gather, render, publish.

use accelfed_provider::config::Config;
use accelfed_publishers::Destination;
use accelfed_schemas::render;

use crate::args::ProvideArgs;
use crate::exit::Outcome;

pub fn run(args: &ProvideArgs) -> Outcome {
    let loaded = match Config::load(&args.config) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("error: {err}");
            return Outcome::Config;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return Outcome::Partial;
        }
    };
    let gathered = match runtime.block_on(accelfed_provider::gather(
        &loaded.config,
        chrono::Utc::now(),
    )) {
        Ok(gathered) => gathered,
        Err(err) => {
            eprintln!("error: {}: {err}", args.config.display());
            return Outcome::Config;
        }
    };
    for failure in &gathered.failures {
        tracing::error!(provider = %failure.provider, "{}", failure.message);
    }
    let document = render::render(&gathered.snapshot, args.format);
    let destination = match &args.output {
        Some(path) => Destination::File(path.clone()),
        None => Destination::Stdout,
    };
    if let Err(err) = accelfed_publishers::publish(&document, &destination) {
        tracing::error!("{err}");
        return Outcome::Partial;
    }
    tracing::info!(
        site = %gathered.snapshot.domain.name,
        format = %args.format,
        bytes = document.len(),
        "published"
    );
    if gathered.failures.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Partial
    }
}
