//! The ingest protocol as the central service receives it: any bytes are either a `Submit`
//! request or a decode error; each of its records is either refused with a reason or a record
//! that the repository's own check can judge, and that encodes back to itself.
#![no_main]

use accelfed_accounting::wire::convert::{
    outcome_to_proto, record_from_proto, record_to_proto, rejection_kind,
};
use accelfed_accounting::wire::encoded::{EncodedSubmitRequest, decode_record};
use accelfed_accounting::wire::{Outcome, Submission};
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    // The request, as tonic decodes it (each record left as its bytes); else one record alone
    // (the spool's stored encoding). Each record then decodes on its own, as the service does.
    let entries = match EncodedSubmitRequest::decode(data) {
        Ok(request) => request.records.iter().map(|r| r.to_vec()).collect(),
        Err(_) => vec![data.to_vec()],
    };
    let now = accelfed_fuzz::now();
    for entry in entries {
        let Ok(proto) = decode_record(&entry) else {
            continue;
        };
        match record_from_proto(proto) {
            Submission::Record(record) => {
                let _ = record.id();
                let record = *record;
                let _ = record.validate(now).map_err(|error| error.to_string());
                let again = record_from_proto(record_to_proto(&record));
                match again {
                    Submission::Record(back) => assert_eq!(*back, record, "protobuf round trip"),
                    Submission::Invalid(reason) => {
                        panic!("a record we accepted is refused once re-encoded: {reason:?}")
                    }
                }
            }
            Submission::Invalid(reason) => {
                assert!(!rejection_kind(&reason).is_empty());
                let outcome = outcome_to_proto(&Outcome::Rejected { reason });
                assert!(!outcome.reason.is_empty(), "a rejection without a sentence");
            }
        }
    }
});
