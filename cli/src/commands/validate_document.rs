//! `validate --config`, second half: the GLUE 2.1 JSON document the site would publish, as far as
//! it is known without the network (the site and its `[static]` services), must pass the checks
//! the federation registry runs on a push (`accelfed_central::Checker`: size,
//! JSON Schema, the site, consistency and LDAP lengths). A configuration that parses but whose
//! document the registry would refuse is a configuration error found before any cron run.

use accelfed_central::Checker;
use accelfed_central::RegistryConfig;
use accelfed_provider::config::Config;
use accelfed_schemas::render::json;

/// Gathers the static part of `config` as of now, renders it and checks it as the registry
/// would; the error is a sentence for the user.
pub fn check(config: &Config) -> Result<(), String> {
    let static_part = config.static_part();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|err| format!("cannot start a runtime: {err}"))?;
    let gathered = runtime
        .block_on(accelfed_provider::gather(&static_part, chrono::Utc::now()))
        .map_err(|err| format!("the site's document cannot be built: {err}"))?;
    // The static provider reads nothing, so it cannot fail; a failure here is still one to show.
    if let Some(failure) = gathered.failures.first() {
        return Err(format!("{}: {}", failure.provider, failure.message));
    }
    let checker = Checker::new(RegistryConfig::default().max_document_bytes)
        .map_err(|err| err.to_string())?;
    let body = json::render(&gathered.snapshot);
    checker
        .check(&body, config.site.name.as_str())
        .map(|_| ())
        .map_err(|rejection| {
            format!("the federation registry would refuse the site's document: {rejection}")
        })
}
