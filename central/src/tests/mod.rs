//! Checks of the service's parts that need more than `run` offers: `ship` against the real ingest
//! behind a gate that fails one call, and against TLS servers it must not trust; the registry's
//! LDAP sync against a real slapd, and the sync's and `query --ldap`'s CA over `ldaps://`.
//! They live inside the crate because the parts they assemble are crate-private (issue #29: tests
//! outside it get the whole service, through `run`).

mod ldap_ca;
mod ldap_sync;
mod ship_causes;
mod ship_pipeline;
