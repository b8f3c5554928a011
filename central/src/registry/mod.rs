//! The federation registry: sites push their GLUE 2.1 JSON document, users and brokers ask which
//! GPUs the federation offers.
//!
//! * [`offer`]: the offers (cloud flavors and batch node types with GPUs) read from a site's
//!   entities, and the [`offer::Filter`] every query form shares.

pub mod offer;
