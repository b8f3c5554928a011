//! The gRPC protocol between a site's shipper and the central repository
//! (`schemas/proto/accounting.proto`, compiled by `build.rs` with protox: no system `protoc`).
//!
//! [`proto`] is the generated code (messages, client, server); [`convert`] maps usage records and
//! outcomes to and from it; [`encoded`] is the request the shipper builds from the spool's
//! already-encoded records. The bearer token travels in the `authorization` metadata.

#![allow(missing_debug_implementations, reason = "generated code")]

pub mod convert;
pub mod encoded;

/// The generated protobuf messages and the `Accounting` service's client and server.
#[allow(clippy::all, clippy::pedantic, missing_docs, reason = "generated code")]
pub mod proto {
    tonic::include_proto!("accelfed.accounting.v1");
}

/// The metadata key that carries `Bearer <token>`.
pub const AUTHORIZATION: &str = "authorization";
