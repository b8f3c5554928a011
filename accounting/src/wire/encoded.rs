//! A `SubmitRequest` whose records are already encoded. The spool keeps each record's protobuf
//! encoding next to its JSON form, so the shipper copies bytes into the request instead of
//! decoding JSON and encoding protobuf again for every record of every batch.
//!
//! On the wire this is the same message: a `repeated UsageRecord` field is a sequence of
//! length-delimited entries under tag 1, and so is a `repeated bytes` field whose entries are the
//! encoded records. The server decodes it as the ordinary `SubmitRequest`.

use bytes::Bytes;
use prost::Message;

use super::convert::record_to_proto;
use super::proto;
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
}

/// The protobuf encoding of `record`, as an [`EncodedSubmitRequest`] carries it.
pub fn encode_record(record: &UsageRecord) -> Vec<u8> {
    record_to_proto(record).encode_to_vec()
}

/// The record in an encoding made by [`encode_record`]; `None` if the bytes are not one.
pub fn decode_record(bytes: &[u8]) -> Option<proto::UsageRecord> {
    proto::UsageRecord::decode(bytes).ok()
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
        }
        .encode_to_vec();
        let ordinary = proto::SubmitRequest {
            records: records.iter().map(record_to_proto).collect(),
            spool_depth: Some(7),
        };
        assert_eq!(encoded, ordinary.encode_to_vec());
        assert_eq!(
            proto::SubmitRequest::decode(encoded.as_slice()).unwrap(),
            ordinary
        );
    }

    #[test]
    fn a_record_decodes_back_and_garbage_does_not() {
        let record = sample::record("vm-1");
        assert_eq!(
            decode_record(&encode_record(&record)),
            Some(record_to_proto(&record))
        );
        assert_eq!(decode_record(&[0xff, 0xff, 0xff]), None);
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
