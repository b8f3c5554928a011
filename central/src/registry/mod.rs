//! The federation registry: sites push their GLUE 2.1 JSON document, users and brokers ask which
//! GPUs the federation offers.
//!
//! * `accelfed_schemas::offer`: the offers (cloud flavors and batch node types with GPUs) read from
//!   a site's entities, and the `Filter` every query form shares (pure, so they live with the
//!   model); `offer`'s tests hold them against documents the registry reads.
//! * [`check`]: what a pushed document must pass (size, JSON with no key twice, entities, schema,
//!   site, names, times: [`duplicate_keys`], [`sanity`]).
//! * [`store`]: the latest document per site and a history, SQLite or PostgreSQL.
//! * [`index`]: the in-memory view queries read, rebuilt on push and swapped in whole; each site's
//!   [`postings`] (offers by model word, VO, kind) narrow a query to its candidates, and its
//!   [`answer`] bytes are rendered once per push.
//! * [`capacity`]: each site's GPUs per model as its stored documents gave them, for the page's
//!   capacity and occupancy over time.
//! * [`Registry`] (`state.rs`): push and query over the three; [`http`] and [`https`]: the API,
//!   whose pushes are read within a size and a minimum rate ([`body`]).

pub mod answer;
pub mod body;
mod broker_cache;
pub mod capacity;
pub mod check;
pub mod config;
mod consistency;
pub mod duplicate_keys;
pub mod federation;
pub mod http;
pub mod https;
pub mod index;
mod intersect;
pub mod ldap;
#[cfg(test)]
mod offer;
pub mod paging;
pub mod postings;
pub mod push_counts;
pub mod sanity;
pub mod service;
mod state;
pub mod store;
#[cfg(test)]
mod test_support;
pub mod web;

pub use state::Registry;
