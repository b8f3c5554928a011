//! Command-line arguments.

use std::path::PathBuf;

mod spool;
pub use spool::{SpoolAction, SpoolArgs};

use accelfed_schemas::render::Format;
use clap::{Parser, Subcommand};

pub mod agent;
mod init;
mod report;

pub use init::{InitArgs, InitCentralArgs, InitTarget};
pub use report::{DEFAULT_DATABASE, ReportArgs};

/// accelfed: which GPUs a research site offers to which VO, published as GLUE2, and their use
/// accounted per VO.
#[derive(Debug, Parser)]
#[command(version = accelfed_central::build_info::VERSION_LINE, about, long_about = None, propagate_version = true)]
pub struct Args {
    /// More log output on standard error: -v debug for accelfed, -vv debug for every library too.
    /// Without it accelfed logs one summary line per run at info.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Only errors on standard error.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// How log lines are written: `text` for people, `json` for log collectors.
    #[arg(long, global = true, value_enum, default_value_t)]
    pub log_format: crate::telemetry::LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// Where `provide --publish` sends the document besides standard output or `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PublishTarget {
    /// The federation registry of `accelfed serve` (HTTPS push).
    Registry,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Gather the site's GPU information from its providers and publish it as GLUE2.
    ///
    /// Exit status: 0 all published; 1 published, but a provider or publisher failed; 2 usage or
    /// configuration error, or an --output this user may not write (nothing published).
    Provide(ProvideArgs),
    /// Check a configuration file without contacting anything.
    ///
    /// Exit status: 0 valid; 2 invalid (the error names file:line:column and the field).
    Validate(ValidateArgs),
    /// Report GPU-hours from the accounting repository, per VO, site, GPU model or month.
    ///
    /// Reads only the repository's summaries, so it is fast on any number of records. Exit status:
    /// 0 report written; 1 the repository could not be read; 2 usage error.
    Report(ReportArgs),
    /// Meter GPU usage: observations from every configured backend (and the manual-usage file)
    /// become monthly usage records, written to the spool in one transaction.
    ///
    /// Exit status: 0 all metered; 1 a backend failed (the others' records were written) or
    /// records were held back above the installed GPUs (see `accelfed spool`); 2 usage or
    /// configuration error (nothing written).
    Meter(MeterArgs),
    /// Ship the spool's pending records to the central repository (gRPC over TLS), oldest first.
    ///
    /// Exit status: 0 everything acknowledged; 1 a record was refused or the repository could not
    /// be reached (what was acknowledged stays acknowledged; the rest stays in the spool); 2 usage
    /// or configuration error.
    Ship(ShipArgs),
    /// The site spool's records that the meter held back (usage above the installed GPUs): list
    /// them, or release them for shipping.
    ///
    /// Exit status: 0 done; 1 the spool could not be read or an id is not held; 2 usage or
    /// configuration error.
    Spool(SpoolArgs),
    /// Export the spool's records that changed since the last export as APEL accelerator messages
    /// (`APEL-accelerator-message` v0.1) to ssmsend's outgoing queue or to ARGO AMS.
    ///
    /// Exit status: 0 all exported; 1 a record could not be exported or the destination failed
    /// (the next run re-sends what was not delivered); 2 usage or configuration error.
    Export(ExportArgs),
    /// GPU offers across the federation from the registry (HTTPS API): cloud flavors and batch
    /// node types, filtered by model (aliases: A100 matches NVIDIA A100-SXM4-80GB), GPUs, memory,
    /// VO, sharing mode, freshness.
    ///
    /// Exit status: 0 answered (possibly with no offers); 1 the registry could not be asked; 2
    /// usage error.
    Query(QueryArgs),
    /// Run the central accounting service: gRPC ingest over TLS and /metrics.
    ///
    /// Runs until SIGINT or SIGTERM; SIGHUP reloads the sites, their tokens, [access] and the TLS
    /// certificate from the configuration file (a bad file is refused, the old one kept). Exit
    /// status: 0 stopped cleanly; 1 failed while running; 2 configuration error.
    Serve(ServeArgs),
    /// Make a new site token: the token on standard output or --output (give it to the site), and
    /// the site's line added to central.toml (--add-to) or printed on standard error.
    Token(TokenArgs),
    /// Write a starting configuration: `init central` writes central.toml and, with --private-ca,
    /// a private CA and the service's certificate.
    ///
    /// Exit status: 0 written; 1 a file could not be written; 2 usage error or a file already
    /// exists (nothing is overwritten).
    Init(InitArgs),
    /// Write man pages or shell completions (bash, zsh, fish) made from this command-line
    /// definition into a folder, for packages (`scripts/package`).
    #[command(hide = true)]
    Generate(GenerateArgs),
    /// The node agent: reads the node's GPUs (NVML) every period and keeps, per holder (Slurm
    /// job, Kubernetes pod, VM, process) and GPU, the held, active and idle seconds and the
    /// energy; serves them on a local endpoint (/metrics, /v1/state).
    ///
    /// Exit status: 0 stopped (or --once done); 1 no NVML library, driver or GPU; 2 usage error,
    /// an unreadable state file or an endpoint that cannot be opened.
    Agent(agent::AgentArgs),
    /// The GPU allocations of this node idle right now (jobs, pods, VMs, processes), from the
    /// node agent: idle since, idle hours; a table, or JSON for the site's automation. With
    /// --config site.toml, the whole site's (every agent document of [accounting.agents]), one row
    /// per job, pod or VM with the VO and user its backend knows and the GPU-hours lost.
    ///
    /// Exit status: 0 listed; 1 the agent could not be read; 2 usage error or an unreadable --from file.
    Idle(agent::IdleArgs),
}

/// What `accelfed generate` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Generated {
    /// `accelfed.1` and one page per subcommand (`accelfed-provide.1`, ...).
    Man,
    /// `accelfed.bash`, `_accelfed` (zsh) and `accelfed.fish`.
    Completions,
}

#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// man or completions.
    #[arg(value_enum)]
    pub what: Generated,
    /// The folder to write into (created when missing).
    pub dir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct MeterArgs {
    /// The site configuration file (TOML) with an [accounting] table.
    #[arg(short, long, env = "ACCELFED_CONFIG")]
    pub config: PathBuf,
    /// Meter usage from this instant on (RFC 3339, or YYYY-MM-DD for midnight UTC); default: the
    /// start of the previous month, so last month's records are final.
    #[arg(long, value_parser = parse_since)]
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    #[command(flatten)]
    pub spool: SpoolOverride,
    /// The manual-usage file (JSON lines); overrides accounting.observations.
    #[arg(long, value_name = "FILE", env = "ACCELFED_OBSERVATIONS")]
    pub observations: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ShipArgs {
    /// The site configuration file (TOML) with an [accounting.ship] table.
    #[arg(short, long, env = "ACCELFED_CONFIG")]
    pub config: PathBuf,
    /// First compare the repository's record counts per month with the spool's, and re-send the
    /// months the repository lacks records of.
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub spool: SpoolOverride,
    #[command(flatten)]
    pub repository: ShipOverrides,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The site configuration file (TOML) with an [accounting.apel] table.
    #[arg(short, long, env = "ACCELFED_CONFIG")]
    pub config: PathBuf,
    /// Export every record in the spool, not only those changed since the last export (APEL
    /// replaces records it already has).
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The central configuration file (TOML).
    #[arg(short, long, env = "ACCELFED_CENTRAL_CONFIG")]
    pub config: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct TokenArgs {
    /// The site the token is for (its GOCDB name), for the central.toml line.
    #[arg(long)]
    pub site: String,
    /// Add the site's table to this central.toml (comments kept; a placeholder for the site is
    /// replaced, a real hash is not) instead of printing it. Restart `serve` to take it.
    #[arg(long, value_name = "CENTRAL_TOML")]
    pub add_to: Option<PathBuf>,
    /// Write the token to this file (created 0600; an existing file is refused) instead of
    /// standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn parse_dit(value: &str) -> Result<accelfed_schemas::render::ldif::Dit, String> {
    value.parse()
}

fn parse_since(value: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(value) {
        return Ok(time.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|naive| naive.and_utc())
        .ok_or_else(|| format!("{value:?} is neither RFC 3339 nor YYYY-MM-DD"))
}

#[derive(Debug, clap::Args)]
pub struct ProvideArgs {
    /// The site configuration file (TOML).
    #[arg(short, long, env = "ACCELFED_CONFIG")]
    pub config: PathBuf,
    /// Output format: glue21-json, ldif-glue20 (a stock BDII), ldif-glue21 or glue20-xml.
    #[arg(short, long, default_value = "glue21-json", value_parser = format_parser())]
    pub format: Format,
    /// Write to this file (replaced atomically) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// LDIF layout: `resource` (services under GLUE2GroupID=resource,o=glue, for a resource BDII
    /// that a site BDII reads) or `site` (under GLUE2GroupID=resource,GLUE2DomainID=<site>,o=glue,
    /// as a site BDII publishes, so a top BDII reading the site's domain gets every GPU entry).
    #[arg(long, default_value = "resource", value_parser = parse_dit)]
    pub dit: accelfed_schemas::render::ldif::Dit,
    /// `registry`: push the GLUE 2.1 JSON document to the federation registry; where to, from
    /// [publish.registry] in the configuration file or the --registry-* flags (a flag overrides its
    /// key). With -o the document (in --format) is written to the file too, from the same
    /// gathering; without, nothing goes to standard output.
    #[arg(long, value_enum)]
    pub publish: Option<PublishTarget>,
    /// The registry's base URL, https://host[:port], e.g. https://registry.example.org:8443
    /// (overrides publish.registry.url); several instances, tried in order, separated by commas.
    #[arg(long, env = "ACCELFED_REGISTRY_URL")]
    pub registry_url: Option<String>,
    /// A file holding the site's token, from `accelfed token` (overrides
    /// publish.registry.token_file).
    #[arg(long, env = "ACCELFED_REGISTRY_TOKEN_FILE")]
    pub registry_token_file: Option<PathBuf>,
    /// A CA to trust besides the system's roots: a PEM file or a folder of them such as
    /// /etc/grid-security/certificates (overrides publish.registry.ca).
    #[arg(long, env = "ACCELFED_REGISTRY_CA")]
    pub registry_ca: Option<PathBuf>,
    /// Save every complete document (no provider failed) to FILE, and publish FILE instead, with
    /// its original timestamps, when the configuration cannot be used or every provider fails, so
    /// a BDII keeps the site until its entries expire. The exit status is still 2 or 1. One file
    /// per format and layout (FILE.format beside it records which; a saved file of another format
    /// or --dit is refused); not used with --publish registry.
    #[arg(long, value_name = "FILE", env = "ACCELFED_KEEP_LAST_GOOD")]
    pub keep_last_good: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    /// The registry's base URL, e.g. https://registry.example.org:8443; several instances of the
    /// central service, tried in order, separated by commas or given as repeated flags: the next
    /// is asked when one is unreachable, times out or answers a server error, never after a
    /// refusal (401, 403, 404), which every instance would answer alike.
    #[arg(long, env = "ACCELFED_REGISTRY_URL", value_delimiter = ',')]
    pub url: Vec<String>,
    /// Ask a BDII-like LDAP server instead of the registry, e.g. ldap://bdii.example.org:2170
    /// (anonymous; GLUE 2.0 layout); --ca applies to an ldaps:// server.
    #[arg(long)]
    pub ldap: Option<String>,
    /// The search base for --ldap.
    #[arg(long, default_value = accelfed_central::DEFAULT_LDAP_BASE, requires = "ldap")]
    pub ldap_base: String,
    /// A CA to trust besides the system's roots, for the registry or an ldaps:// --ldap server: a
    /// PEM file or a folder of them such as /etc/grid-security/certificates.
    #[arg(long, env = "ACCELFED_REGISTRY_CA")]
    pub ca: Option<PathBuf>,
    /// Seconds the query may take, whole: connecting, the TLS handshake, the request and the
    /// answer (at least 1).
    #[arg(long, env = "ACCELFED_QUERY_TIMEOUT_S", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_s: u64,
    /// GPU vendor, case-insensitive (nvidia, amd).
    #[arg(long)]
    pub vendor: Option<String>,
    /// GPU model; matched by words, so A100 matches NVIDIA A100-SXM4-80GB and Tesla A100.
    #[arg(long)]
    pub model: Option<String>,
    /// At least this many whole physical GPUs in one instance or on one node (MIG slices,
    /// replicas and vGPUs are not whole GPUs: see --min-slices).
    #[arg(long)]
    pub min_gpus: Option<accelfed_schemas::gpu::GpuCount>,
    /// At least this many MIG slices, time-slicing or MPS replicas or vGPUs in one instance or on
    /// one node.
    #[arg(long)]
    pub min_slices: Option<accelfed_schemas::gpu::GpuCount>,
    /// Slices of this MIG profile (1g.10gb).
    #[arg(long)]
    pub mig_profile: Option<String>,
    /// At least this much memory per GPU, in MB.
    #[arg(long = "min-memory")]
    pub min_memory_mb: Option<u64>,
    /// At least this compute capability (8.0 matches 8.0, 8.6, 9.0).
    #[arg(long)]
    pub compute_capability: Option<String>,
    /// passthrough, vgpu, mig, time-slicing or mps.
    #[arg(long)]
    pub sharing: Option<accelfed_schemas::offer::Sharing>,
    /// Offered to this VO.
    #[arg(long)]
    pub vo: Option<String>,
    /// Only this site.
    #[arg(long)]
    pub site: Option<String>,
    /// At least this many physical GPUs free now.
    #[arg(long)]
    pub min_free: Option<accelfed_schemas::gpu::GpuCount>,
    /// Leave out sites whose information is stale (CreationTime + Validity passed).
    #[arg(long)]
    pub fresh: bool,
    /// table or json.
    #[arg(long, value_enum, default_value = "table")]
    pub format: QueryFormat,
}

/// How `accelfed query` prints offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryFormat {
    Table,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The site configuration file (TOML).
    #[arg(
        short,
        long,
        env = "ACCELFED_CONFIG",
        required_unless_present = "central"
    )]
    pub config: Option<PathBuf>,
    /// The central service's file instead (`central.toml`): its keys, token lines, TLS
    /// certificate and key (read and paired) and [ldap]; nothing is contacted or opened.
    #[arg(long)]
    pub central: Option<PathBuf>,
}

/// `provide --format`: the names as possible values, so help, man pages and shell completion
/// offer them (a parser function alone would leave completion offering file names).
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Format::ALL.map(Format::as_str))
        .try_map(|name| name.parse::<Format>())
}

/// `--spool` of the accounting commands: the site's spool instead of accounting.spool.
#[derive(Debug, clap::Args)]
pub struct SpoolOverride {
    /// The spool (SQLite file); overrides accounting.spool.
    #[arg(long = "spool", value_name = "FILE", env = "ACCELFED_SPOOL")]
    pub path: Option<PathBuf>,
}

/// `ship`'s flags over `[accounting.ship]`, key by key (as `provide --registry-*` over
/// `[publish.registry]`); with --endpoint and --token-file the table may be left out.
#[derive(Debug, clap::Args)]
pub struct ShipOverrides {
    /// The repository's gRPC endpoint, https://host:port (overrides accounting.ship.endpoint);
    /// several central instances, tried in order, separated by commas or given as repeated flags.
    #[arg(long, env = "ACCELFED_SHIP_ENDPOINT", value_delimiter = ',')]
    pub endpoint: Vec<accelfed_net::HttpsUrl>,
    /// A file holding the site's token (overrides accounting.ship.token_file).
    #[arg(long, value_name = "FILE", env = "ACCELFED_SHIP_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// The CA to trust: a PEM file or a folder of them such as /etc/grid-security/certificates
    /// (overrides accounting.ship.ca).
    #[arg(long, value_name = "FILE_OR_DIR", env = "ACCELFED_SHIP_CA")]
    pub ca: Option<PathBuf>,
}
