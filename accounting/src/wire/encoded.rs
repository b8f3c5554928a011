//! `SubmitRequest` as both sides hold it: each record as its own encoded bytes. The spool keeps
//! each record's protobuf encoding next to its JSON form, so the shipper copies bytes into the
//! request instead of decoding JSON and encoding protobuf again for every record of every batch;
//! the service decodes each record on its own, so one that does not decode (invalid UTF-8, a
//! wrong wire type) is refused alone, with the decoder's reason, and the rest of the batch stored.
//!
//! On the wire this is the `.proto`'s message: a `repeated UsageRecord` field is a sequence of
//! length-delimited entries under tag 1, and so is a `repeated bytes` field whose entries are the
//! encoded records. `build.rs` maps the generated code's `SubmitRequest` to this type.

use bytes::Bytes;
use prost::Message;

use super::convert::{record_from_proto, record_to_proto};
use super::{Rejection, Submission, proto};
use accelfed_schemas::usage::UsageRecord;

/// `SubmitRequest` with each record as its protobuf encoding.
#[derive(Clone, PartialEq, Message)]
pub struct EncodedSubmitRequest {
    /// Each entry an encoded [`proto::UsageRecord`], shared with the spool's page (a retry or the
    /// next attempt clones a reference, not the bytes).
    #[prost(bytes = "bytes", repeated, tag = "1")]
    pub records: Vec<Bytes>,
    #[prost(uint64, optional, tag = "2")]
    pub spool_depth: Option<u64>,
    /// How many records the site holds back; `None` when the call does not report them.
    #[prost(uint64, optional, tag = "3")]
    pub held_count: Option<u64>,
    /// The first of them (see `repository::contacts::MAX_HELD_REPORTED`).
    #[prost(message, repeated, tag = "4")]
    pub held: Vec<proto::HeldRecord>,
}

impl EncodedSubmitRequest {
    /// A request of these protobuf records.
    pub fn of(records: &[proto::UsageRecord], spool_depth: Option<u64>) -> Self {
        Self {
            records: records
                .iter()
                .map(|record| record.encode_to_vec().into())
                .collect(),
            spool_depth,
            ..Self::default()
        }
    }
}

/// The protobuf encoding of `record`, as an [`EncodedSubmitRequest`] carries it.
pub fn encode_record(record: &UsageRecord) -> Vec<u8> {
    record_to_proto(record).encode_to_vec()
}

/// The record in one entry of an [`EncodedSubmitRequest`], or why the bytes are not one (the
/// decoder names the field: `UsageRecord.vo: invalid string value: data is not UTF-8 encoded`).
pub fn decode_record(bytes: &[u8]) -> Result<proto::UsageRecord, prost::DecodeError> {
    proto::UsageRecord::decode(bytes)
}

/// One entry of an [`EncodedSubmitRequest`] as the service judges it: the record, checked
/// ([`record_from_proto`], whose reasons come from `From<UsageError> for Rejection`), or
/// `malformed` with the decoder's reason when the bytes are not one. Refused alone either way.
pub fn decode_submission(bytes: &[u8]) -> Submission {
    match decode_record(bytes) {
        Ok(record) => record_from_proto(record),
        Err(error) => Submission::Invalid(Rejection::Malformed {
            detail: error.to_string(),
        }),
    }
}

/// The gRPC method the request goes to (`package.Service/Method` of the `.proto`).
pub const SUBMIT_PATH: &str = "/accelfed.accounting.v1.Accounting/Submit";

#[cfg(test)]
mod tests {
    use accelfed_schemas::usage::sample;

    use super::*;

    #[test]
    fn an_encoded_request_is_the_ordinary_request_on_the_wire() {
        let records = [sample::record("vm-1"), sample::record("vm-2")];
        let encoded = EncodedSubmitRequest {
            records: records.iter().map(|r| encode_record(r).into()).collect(),
            spool_depth: Some(7),
            ..EncodedSubmitRequest::default()
        }
        .encode_to_vec();
        // The `.proto`'s message as prost would generate it, written out here because the
        // generated code uses `EncodedSubmitRequest` in its place.
        #[derive(Clone, PartialEq, Message)]
        struct SubmitRequest {
            #[prost(message, repeated, tag = "1")]
            records: Vec<proto::UsageRecord>,
            #[prost(uint64, optional, tag = "2")]
            spool_depth: Option<u64>,
        }
        let ordinary = SubmitRequest {
            records: records.iter().map(record_to_proto).collect(),
            spool_depth: Some(7),
        };
        assert_eq!(encoded, ordinary.encode_to_vec());
        assert_eq!(SubmitRequest::decode(encoded.as_slice()).unwrap(), ordinary);
        assert_eq!(
            EncodedSubmitRequest::of(&ordinary.records, Some(7)).encode_to_vec(),
            encoded
        );
    }

    #[test]
    fn a_record_decodes_back_and_garbage_does_not() {
        let record = sample::record("vm-1");
        assert_eq!(
            decode_record(&encode_record(&record)).unwrap(),
            record_to_proto(&record)
        );
        assert!(decode_record(&[0xff, 0xff, 0xff]).is_err());
        // A string field holding bytes that are not UTF-8: the decoder names the field.
        let mut bad = encode_record(&record);
        let at = bad.windows(4).position(|w| w == b"vm-1").unwrap();
        bad[at] = 0xff;
        let error = decode_record(&bad).unwrap_err().to_string();
        assert!(error.contains("UsageRecord.associated_record"), "{error}");
    }

    #[test]
    fn the_path_is_the_generated_clients() {
        let generated = include_str!(concat!(env!("OUT_DIR"), "/accelfed.accounting.v1.rs"));
        assert!(
            generated.contains(SUBMIT_PATH),
            "{SUBMIT_PATH} not in the generated client"
        );
    }
}
