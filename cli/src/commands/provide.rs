//! `accelfed provide`: gather, render, publish.

use accelfed_provider::config::{Config, check_registry_url};
use accelfed_publishers::Destination;
use accelfed_schemas::render;

use super::meter::resolve;
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
    // Where to push is settled (and the token read) before anything is gathered: a usage error
    // should not wait for every provider to answer.
    let registry = if args.publish.as_deref() == Some("registry") {
        match RegistryPush::prepare(args, &loaded.config) {
            Ok(registry) => Some(registry),
            Err(message) => {
                eprintln!("error: {message}");
                return Outcome::Config;
            }
        }
    } else {
        None
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
    if let Some(registry) = registry {
        return match registry.push(&runtime, document) {
            Ok(answer) => {
                tracing::info!(site = %gathered.snapshot.domain.name, %answer, "pushed to the registry");
                if gathered.failures.is_empty() {
                    Outcome::Ok
                } else {
                    Outcome::Partial
                }
            }
            Err(message) => {
                eprintln!("error: {message}");
                Outcome::Partial
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

/// Where `--publish registry` sends, with the token and CA already read. Each setting is its flag
/// (or environment variable), else its key in `[publish.registry]`; paths from the file are
/// relative to the file.
#[derive(Debug)]
struct RegistryPush {
    url: String,
    token: String,
    ca_pem: Option<Vec<u8>>,
}

impl RegistryPush {
    /// Settles the target and reads the token and CA files; every error is a usage error.
    fn prepare(args: &ProvideArgs, config: &Config) -> Result<Self, String> {
        if args.format != render::Format::Glue21Json {
            return Err(format!(
                "--publish registry sends glue21-json, not {}",
                args.format
            ));
        }
        let table = config
            .publish
            .as_ref()
            .and_then(|publish| publish.registry.as_ref());
        let missing = |flag: &str| {
            format!(
                "--publish registry needs {flag}, or [publish.registry] in the configuration file"
            )
        };
        let url = match (&args.registry_url, table) {
            (Some(url), _) => {
                // The file's URL was checked when the file was read; a flag's by the same rule.
                check_registry_url(url).map_err(|message| format!("--registry-url: {message}"))?;
                url.clone()
            }
            (None, Some(table)) => table.url.get_ref().clone(),
            (None, None) => return Err(missing("--registry-url")),
        };
        // Each path with where it came from, for messages.
        let (token_path, token_source) = match (&args.registry_token_file, table) {
            (Some(path), _) => (path.clone(), "--registry-token-file"),
            (None, Some(table)) => (
                resolve(&args.config, &table.token_file),
                "publish.registry.token_file",
            ),
            (None, None) => return Err(missing("--registry-token-file")),
        };
        let token = match std::fs::read_to_string(&token_path) {
            Ok(token) if !token.trim().is_empty() => token,
            Ok(_) => return Err(format!("{token_source} {}: empty", token_path.display())),
            Err(err) => return Err(format!("{token_source} {}: {err}", token_path.display())),
        };
        let ca = match (&args.registry_ca, table.and_then(|table| table.ca.as_ref())) {
            (Some(path), _) => Some((path.clone(), "--registry-ca")),
            (None, Some(path)) => Some((resolve(&args.config, path), "publish.registry.ca")),
            (None, None) => None,
        };
        let ca_pem = match ca {
            Some((path, source)) => Some(
                std::fs::read(&path)
                    .map_err(|err| format!("{source} {}: {err}", path.display()))?,
            ),
            None => None,
        };
        Ok(Self { url, token, ca_pem })
    }

    /// Pushes `document`; the registry's answer, or why it failed (refused or unreachable).
    fn push(self, runtime: &tokio::runtime::Runtime, document: Vec<u8>) -> Result<String, String> {
        runtime
            .block_on(async {
                let client = accelfed_publishers::registry::client(self.ca_pem.as_deref())?;
                accelfed_publishers::registry::push(&client, &self.url, &self.token, document).await
            })
            .map_err(|err| err.to_string())
    }
}
