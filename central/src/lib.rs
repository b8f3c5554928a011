//! `accelfed serve`: the central services of a federation.
//!
//! This crate will hold the gRPC ingest of usage records, the federation registry's HTTP API (sites
//! push GLUE2, brokers and users query GPUs), the web page, and the per-site token authentication.
//! Daemons take their listener and a shutdown future as arguments so tests can bind port 0.
