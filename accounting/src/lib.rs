//! Accounting: GPU usage becomes monthly usage records that are never lost and never counted twice.
//!
//! This crate holds `meter/` (observations of VMs, pods and jobs -> per-month usage records, pure),
//! `spool/` (the site's durable SQLite queue of records waiting for acknowledgement), [`repository`]
//! (the central store on SQLite or PostgreSQL, with summaries kept on ingest) and [`report`] (tables,
//! CSV, JSON and SVG charts per VO, site, GPU model and month). [`config`] is the `[accounting]`
//! table of the site's file, with its `[accounting.ship]` ([`ship`]) and `[accounting.apel]`
//! ([`apel`]) tables.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod access;
pub mod apel;
pub mod config;
pub mod database;
pub mod flow;
pub mod meter;
pub mod private_file;
pub mod report;
pub mod repository;
pub mod ship;
pub mod spool;
pub mod wire;
