//! `accelfed init central`: a central.toml that `validate --central` and `serve` accept as written,
//! with the service's TLS identity: a private CA and a certificate made here, or an existing
//! certificate and key (an IGTF host certificate) checked before anything is written. New files
//! only: nothing is overwritten, except a central.toml that configures no site yet (the packaged
//! example in /etc/accelfed, which would otherwise make `init` fail on every packaged host).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use accelfed_central::CentralConfig;
use accelfed_central::{TokenHash, new_token};
use accelfed_schemas::names::SiteName;

use crate::args::{InitArgs, InitCentralArgs, InitTarget};
use crate::central_toml::{Settings, render};
use crate::exit::Outcome;
use crate::files::{WriteError, create_folder, create_new, replace};

pub fn run(args: &InitArgs) -> Outcome {
    match &args.what {
        InitTarget::Central(args) => match central(args) {
            Ok(()) => Outcome::Ok,
            Err(failure) => {
                tracing::error!("{}", failure.message);
                failure.outcome
            }
        },
    }
}

/// Why init stopped, and the exit status.
struct Failure {
    message: String,
    outcome: Outcome,
}

fn usage(message: String) -> Failure {
    Failure {
        message,
        outcome: Outcome::Config,
    }
}

impl From<WriteError> for Failure {
    fn from(err: WriteError) -> Self {
        let outcome = match err {
            WriteError::Exists(_) => Outcome::Config,
            WriteError::Io(_) => Outcome::Partial,
        };
        Failure {
            message: err.to_string(),
            outcome,
        }
    }
}

fn central(args: &InitCentralArgs) -> Result<(), Failure> {
    let config = absolute(&args.config)?;
    let replacing = replaceable(&config)?;
    let tokens = first_sites(&args.sites)?;
    let folder = config.parent().unwrap_or(Path::new("/")).to_owned();
    let database = if args.database.contains("://") {
        args.database.clone()
    } else {
        absolute(Path::new(&args.database))?.display().to_string()
    };
    let (certificate, key, ca) = match &args.private_ca {
        Some(ca_folder) => {
            let ca_folder = absolute(ca_folder)?;
            let (certificate, key) = private_ca(args, &ca_folder, &folder)?;
            (certificate, key, Some(ca_folder.join("ca.pem")))
        }
        None => (absolute(&args.certificate)?, absolute(&args.key)?, None),
    };
    let mut text = render(&Settings {
        grpc: SocketAddr::new(args.listen, args.grpc_port),
        https: SocketAddr::new(args.listen, args.https_port),
        metrics: args.metrics,
        certificate: relative_to(&certificate, &folder),
        key: relative_to(&key, &folder),
        database: &database,
        ca: ca.as_deref(),
    });
    for token in &tokens {
        text = crate::central_toml::add_site(&text, token.site.as_str(), token.hash())
            .map_err(usage)?;
    }
    // The check `validate --central` and `serve` run, before the file exists.
    let loaded = CentralConfig::parse(&config, &text)
        .map(|parsed| accelfed_central::LoadedCentral {
            path: config.clone(),
            config: parsed,
        })
        .map_err(|err| usage(err.to_string()))?;
    accelfed_central::check(&loaded).map_err(|err| {
        usage(format!(
            "{err}; give the service's certificate and key with --certificate and --key, or make \
             a private CA with --private-ca DIR"
        ))
    })?;
    create_folder(&folder, 0o755)?;
    write_config(&config, &text, replacing)?;
    write_tokens(&tokens, &config)?;
    tracing::info!(
        "wrote {config} (gRPC {grpc}, registry {https}, database {database})\n\
         more sites: accelfed token --site NAME --add-to {config} --output NAME.token",
        config = config.display(),
        grpc = loaded.config.listen.grpc,
        https = SocketAddr::new(args.listen, args.https_port),
    );
    Ok(())
}

/// Writes central.toml, replacing the file `replaceable` allowed.
fn write_config(config: &Path, text: &str, replacing: bool) -> Result<(), Failure> {
    if !replacing {
        return Ok(create_new(config, text.as_bytes(), 0o644)?);
    }
    replace(config, text.as_bytes())?;
    tracing::info!(
        "replaced {}: it configured no site yet (the packaged example)",
        config.display()
    );
    Ok(())
}

/// Hands out the first sites' tokens, once central.toml holds their hashes.
fn write_tokens(tokens: &[FirstSite], config: &Path) -> Result<(), Failure> {
    for token in tokens {
        create_new(&token.file, format!("{}\n", token.secret).as_bytes(), 0o600)?;
        tracing::info!(
            "wrote {}'s token to {} (0600; give it to the site) and its hash to {}",
            token.site.as_str(),
            token.file.display(),
            config.display()
        );
    }
    Ok(())
}

/// A first site's new token, before anything is written.
struct FirstSite {
    site: SiteName,
    secret: String,
    file: PathBuf,
}

impl FirstSite {
    fn hash(&self) -> TokenHash {
        TokenHash::of(&self.secret)
    }
}

/// Tokens for the `--site` names, each to go to `<NAME>.token` in the current folder; refused
/// (nothing written) when a name is no site name or its token file exists.
fn first_sites(names: &[String]) -> Result<Vec<FirstSite>, Failure> {
    let mut sites = Vec::with_capacity(names.len());
    for name in names {
        let site = super::token::site_name(name).map_err(|err| usage(format!("--site: {err}")))?;
        let file = absolute(Path::new(&token_file_name(site.as_str())))?;
        if file.exists() || sites.iter().any(|known: &FirstSite| known.file == file) {
            return Err(usage(format!(
                "{}: exists; init writes new files only (move it away first)",
                file.display()
            )));
        }
        let secret = new_token().map_err(|err| Failure {
            message: format!("no randomness from the operating system: {err}"),
            outcome: Outcome::Partial,
        })?;
        sites.push(FirstSite { site, secret, file });
    }
    Ok(sites)
}

/// `<NAME>.token`, with anything but letters, digits, `.`, `-` and `_` as `_`: a site name may
/// hold `/` or start with `.`, a file name in the current folder must not.
fn token_file_name(site: &str) -> String {
    let name: String = site
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect();
    format!("{}.token", name.trim_start_matches('.'))
}

/// Whether an existing central.toml at `config` may be replaced: only one that gives no site a
/// token hash (the examples' placeholder or no `[sites]` at all), since replacing a configured
/// service's file would lock its sites out. `false` when there is no file.
fn replaceable(config: &Path) -> Result<bool, Failure> {
    let text = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(usage(format!("{}: {err}", config.display()))),
    };
    if crate::central_toml::configures_a_site(&text) {
        return Err(usage(format!(
            "{}: exists and gives sites their token hashes; init never replaces a configured \
             service (give another --config)",
            config.display()
        )));
    }
    Ok(true)
}

/// Writes the CA to `ca_folder` and the service's certificate and key to `tls/` beside
/// central.toml; their paths.
fn private_ca(
    args: &InitCentralArgs,
    ca_folder: &Path,
    folder: &Path,
) -> Result<(PathBuf, PathBuf), Failure> {
    let names = if args.names.is_empty() {
        crate::pki::default_names()
    } else {
        args.names.clone()
    };
    let pki = crate::pki::generate(&names).map_err(usage)?;
    let tls = folder.join("tls");
    let files = [
        (ca_folder.join("ca.pem"), &pki.ca_certificate, 0o644),
        (ca_folder.join("ca.key"), &pki.ca_key, 0o600),
        (tls.join("service.pem"), &pki.service_chain, 0o644),
        (tls.join("service.key"), &pki.service_key, 0o600),
    ];
    // Refuse before writing anything, so a second run leaves the first one's files whole.
    for (path, _, _) in &files {
        if path.exists() {
            return Err(usage(format!(
                "{}: exists; init writes new files only (move it away first)",
                path.display()
            )));
        }
    }
    create_folder(ca_folder, 0o755)?;
    create_folder(&tls, 0o750)?;
    for (path, contents, mode) in &files {
        create_new(path, contents.as_bytes(), *mode)?;
    }
    tracing::info!(
        "wrote the private CA {} (give it to the sites) and its key {} (0600: keep it offline)\n\
         wrote {} for {} (valid until {}) and its key {}",
        files[0].0.display(),
        files[1].0.display(),
        files[2].0.display(),
        names.join(", "),
        pki.service_expires,
        files[3].0.display(),
    );
    Ok((files[2].0.clone(), files[3].0.clone()))
}

/// `path` from the current folder, as the command line means it.
fn absolute(path: &Path) -> Result<PathBuf, Failure> {
    std::path::absolute(path).map_err(|err| usage(format!("{}: {err}", path.display())))
}

/// `path` relative to `folder` when it lies inside it (central.toml resolves it from there), so
/// the folder can be moved whole; else as it is.
fn relative_to<'a>(path: &'a Path, folder: &Path) -> &'a Path {
    path.strip_prefix(folder).unwrap_or(path)
}
