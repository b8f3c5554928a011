//! Several central instances, and a central that outlives its database: sites that list more
//! than one instance fail over between them, but not after a refusal ([`fail_over`]), two
//! instances on one database act as one while one is killed ([`two_instances`]), and `accelfed serve` keeps taking
//! records and documents across a restart of its PostgreSQL ([`database_restart`]). Both run the
//! real binaries: `accelfed serve` as processes, sites that meter, ship and push with `accelfed`.

#![allow(clippy::unwrap_used)]

mod database_restart;
mod fail_over;
mod federation;
mod two_instances;
