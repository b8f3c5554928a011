//! `accelfed init central`: the arguments that make a first central.toml and the service's TLS
//! identity.

use std::path::PathBuf;

use clap::Subcommand;

use super::DEFAULT_DATABASE;

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    #[command(subcommand)]
    pub what: InitTarget,
}

#[derive(Debug, Subcommand)]
pub enum InitTarget {
    /// central.toml for `accelfed serve`, with the service's TLS identity: a private CA made here
    /// (--private-ca) or an existing certificate such as an IGTF host certificate. The file passes
    /// `accelfed validate --central`; add sites with `accelfed token --site NAME --add-to FILE`.
    Central(InitCentralArgs),
}

#[derive(Debug, clap::Args)]
pub struct InitCentralArgs {
    /// The central.toml to write (refused if it exists); --private-ca puts the service's
    /// certificate and key in tls/ beside it.
    #[arg(
        short,
        long,
        env = "ACCELFED_CENTRAL_CONFIG",
        default_value = "/etc/accelfed/central.toml"
    )]
    pub config: PathBuf,
    /// Make a private CA in this folder (ca.pem for the sites, ca.key 0600) and a certificate for
    /// the service signed by it. Refused if the folder already holds ca.pem or ca.key.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["certificate", "key"])]
    pub private_ca: Option<PathBuf>,
    /// A name the sites reach the service by (DNS name or IP address), for its certificate;
    /// repeat for more. Default: this host's name, localhost, 127.0.0.1 and ::1.
    #[arg(long = "name", value_name = "NAME", requires = "private_ca")]
    pub names: Vec<String>,
    /// Without --private-ca: the service's certificate chain (PEM, leaf first), checked now.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/etc/grid-security/hostcert.pem"
    )]
    pub certificate: PathBuf,
    /// Without --private-ca: the certificate's private key (PEM), checked now.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/etc/grid-security/hostkey.pem"
    )]
    pub key: PathBuf,
    /// The repository: an SQLite file (relative to the current folder) or a postgres:// URL.
    #[arg(long, default_value = DEFAULT_DATABASE)]
    pub database: String,
    /// The address the gRPC and registry ports listen on.
    #[arg(long, value_name = "IP", default_value = "0.0.0.0")]
    pub listen: std::net::IpAddr,
    /// The gRPC port sites ship to.
    #[arg(long, default_value_t = 9443)]
    pub grpc_port: u16,
    /// The registry's HTTPS port (push and query).
    #[arg(long, default_value_t = 8443)]
    pub https_port: u16,
    /// Where GET /metrics is served (plain HTTP: keep it private).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    pub metrics: std::net::SocketAddr,
    /// A first site: its token goes to NAME.token in the current folder (0600, for the site) and
    /// its hash into central.toml, as `accelfed token --site NAME --add-to` does. Repeatable.
    #[arg(long = "site", value_name = "NAME")]
    pub sites: Vec<String>,
}
