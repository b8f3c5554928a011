//! The central service for tests: its configuration ([`central_config`], the test tokens), the
//! service started in-process on free ports ([`Server`], the default), `accelfed serve` as a
//! process ([`ServeProcess`], only where the process itself is the point: the binary's smoke test,
//! kill tests, the service's own memory), site folders that meter and ship to it ([`Site`]), one
//! push with the library's own client ([`ship_once`]) and the `accelfed` binary the command-line
//! tests run ([`accelfed`]).

mod binary;
mod config;
mod in_process;
mod listening;
mod metrics;
mod process;
mod ship_once;
mod site;

pub use binary::{NOBODY, accelfed, accelfed_as, accelfed_binary, run, status, stderr};
pub use config::{TOKEN_A, TOKEN_B, central_config, sha256_hex};
pub use in_process::Server;
pub use listening::Listening;
pub use process::ServeProcess;
pub use ship_once::ship_once;
pub use site::{Site, assert_unknown_token_refused, report_by_vo, site, site_a};
