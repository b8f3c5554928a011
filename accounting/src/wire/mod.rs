//! The gRPC protocol between a site's shipper and the central repository
//! (`schemas/proto/accounting.proto`, compiled by `build.rs` with protox: no system `protoc`).
//!
//! The protocol's own vocabulary lives here, below both ends: what a site submits
//! ([`Submission`]) and what becomes of each record ([`Outcome`], [`Rejection`]); the site's
//! spool and shipper and the central repository all speak it. [`proto`] is the generated code
//! (messages, client, server); [`convert`] maps usage records and outcomes to and from it;
//! [`encoded`] is the request the shipper builds from the spool's already-encoded records. The
//! bearer token travels in the `authorization` metadata.

#![allow(missing_debug_implementations, reason = "generated code")]

pub mod convert;
pub mod encoded;
mod outcome;
mod submission;

pub use outcome::{IngestReport, Outcome, Rejection};
pub use submission::Submission;

/// The generated protobuf messages and the `Accounting` service's client and server.
#[allow(clippy::all, clippy::pedantic, missing_docs, reason = "generated code")]
pub mod proto {
    tonic::include_proto!("accelfed.accounting.v1");
}

/// The metadata key that carries `Bearer <token>`.
pub const AUTHORIZATION: &str = "authorization";
