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
    if args.publish.as_deref() == Some("registry") {
        return match push_to_registry(args, &runtime, document) {
            Ok(answer) => {
                tracing::info!(site = %gathered.snapshot.domain.name, %answer, "pushed to the registry");
                if gathered.failures.is_empty() {
                    Outcome::Ok
                } else {
                    Outcome::Partial
                }
            }
            Err((outcome, message)) => {
                eprintln!("error: {message}");
                outcome
            }
        };
    }
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

/// `--publish registry`: the document to the registry with the site's token.
fn push_to_registry(
    args: &ProvideArgs,
    runtime: &tokio::runtime::Runtime,
    document: Vec<u8>,
) -> Result<String, (Outcome, String)> {
    let usage = |message: String| (Outcome::Config, message);
    if args.format != render::Format::Glue21Json {
        return Err(usage(format!(
            "--publish registry sends glue21-json, not {}",
            args.format
        )));
    }
    let url = args
        .registry_url
        .as_deref()
        .ok_or_else(|| usage("--publish registry needs --registry-url".to_owned()))?;
    let token_file = args
        .registry_token_file
        .as_deref()
        .ok_or_else(|| usage("--publish registry needs --registry-token-file".to_owned()))?;
    let token = std::fs::read_to_string(token_file).map_err(|err| {
        usage(format!(
            "--registry-token-file {}: {err}",
            token_file.display()
        ))
    })?;
    let ca = match &args.registry_ca {
        Some(path) => Some(
            std::fs::read(path)
                .map_err(|err| usage(format!("--registry-ca {}: {err}", path.display())))?,
        ),
        None => None,
    };
    runtime
        .block_on(async {
            let client = accelfed_publishers::registry::client(ca.as_deref())?;
            accelfed_publishers::registry::push(&client, url, &token, document).await
        })
        .map_err(|err| (Outcome::Partial, err.to_string()))
}
