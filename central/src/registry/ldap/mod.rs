//! The federation view in LDAP: `accelfed serve` keeps a top-level slapd in sync with what sites
//! pushed, and `accelfed query --ldap` asks any BDII-like server the registry's GPU questions.
//!
//! * [`view`]: the view as GLUE2 entries under `GLUE2GroupID=grid,o=glue`, one
//!   `GLUE2DomainID=<site>` subtree per site, rendered by the project's LDIF renderer.
//! * [`plan`]: the pure diff (add, modify per attribute, delete by DN) between the view and what
//!   the server has; [`client`] carries it out with ldap3; [`round`] does one round, [`task`]
//!   repeats it after pushes and on an interval.
//! * [`filter`] and [`query`]: the registry's filters as an LDAP search, every value escaped
//!   (RFC 4515); [`read`] makes offers of the entries found.

pub mod client;
pub mod config;
pub mod entry;
pub mod error;
pub mod filter;
pub mod plan;
pub mod query;
pub mod read;
pub mod round;
pub mod task;
pub mod view;

pub use config::LdapSyncConfig;
pub use round::LdapSync;
