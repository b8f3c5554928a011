//! Offers and their filter are pure functions of GLUE2 entities and live with the model
//! (`accelfed_schemas::offer`), so the HTTP API, the page, the LDAP query and `accelfed query`
//! share them. These tests hold them against documents the registry reads: rendered, read back,
//! and the example site the registry's own tests push.

#[cfg(test)]
mod shared;
#[cfg(test)]
mod tests;
