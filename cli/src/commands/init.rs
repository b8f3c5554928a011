//! `accelfed init central`: a central.toml that `validate --central` and `serve` accept as written,
//! with the service's TLS identity: a private CA and a certificate made here, or an existing
//! certificate and key (an IGTF host certificate) checked before anything is written. New files
//! only: nothing is overwritten, except a central.toml that configures no site yet (the packaged
//! example in /etc/accelfed, which would otherwise make `init` fail on every packaged host).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use accelfed_central::CentralConfig;

use crate::args::{InitArgs, InitCentralArgs, InitTarget};
use crate::central_toml::{Settings, render};
use crate::exit::Outcome;
use crate::files::{WriteError, create_folder, create_new, replace};

pub fn run(args: &InitArgs) -> Outcome {
    match &args.what {
        InitTarget::Central(args) => match central(args) {
            Ok(()) => Outcome::Ok,
            Err(failure) => {
                eprintln!("error: {}", failure.message);
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
    let text = render(&Settings {
        grpc: SocketAddr::new(args.listen, args.grpc_port),
        https: SocketAddr::new(args.listen, args.https_port),
        metrics: args.metrics,
        certificate: relative_to(&certificate, &folder),
        key: relative_to(&key, &folder),
        database: &database,
        ca: ca.as_deref(),
    });
    // The check `validate --central` and `serve` run, before the file exists.
    let loaded = CentralConfig::parse(&config, &text)
        .map(|parsed| accelfed_central::LoadedCentral {
            path: config.clone(),
            config: parsed,
        })
        .map_err(|err| usage(err.to_string()))?;
    accelfed_central::run::check(&loaded).map_err(|err| {
        usage(format!(
            "{err}; give the service's certificate and key with --certificate and --key, or make \
             a private CA with --private-ca DIR"
        ))
    })?;
    create_folder(&folder, 0o755)?;
    if replacing {
        replace(&config, text.as_bytes())?;
        eprintln!(
            "replaced {}: it configured no site yet (the packaged example)",
            config.display()
        );
    } else {
        create_new(&config, text.as_bytes(), 0o644)?;
    }
    eprintln!(
        "wrote {config} (gRPC {grpc}, registry {https}, database {database})\n\
         next: accelfed token --site NAME --add-to {config} --output NAME.token",
        config = config.display(),
        grpc = loaded.config.listen.grpc,
        https = SocketAddr::new(args.listen, args.https_port),
    );
    Ok(())
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
    eprintln!(
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
