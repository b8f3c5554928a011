//! accelfed's model, with no IO.
//!
//! * [`names`]: validated names (site, VO, FQAN, local ids) that every other type builds on.
//! * [`gpu`]: the GPU vocabulary: type, vendor, model with aliases, memory in MB, fractional counts,
//!   virtualization, and capacity (total, used, free).
//! * [`glue`]: the GLUE2 entities a site publishes (`SiteSnapshot`), batch and cloud alike.
//! * [`offer`]: what a user can ask a site for, read from its GLUE2 entities, and the one filter of
//!   every query form (the registry's HTTP API, web page, LDAP query, `accelfed query`).
//! * [`render`]: pure, deterministic renderings of a snapshot (GLUE 2.1 JSON, LDIF GLUE 2.0 and 2.1,
//!   GLUE 2.0 XML).
//! * [`cause`]: an error's chain of causes, and whether a retry can cure it.
//! * [`secret`]: when a secret file's mode exposes it to other local users.

pub mod cause;
pub mod confusable;
pub mod database_url;
pub mod excerpt;
pub mod glue;
pub mod gpu;
pub mod names;
pub mod offer;
pub mod render;
pub mod secret;
pub mod usage;
