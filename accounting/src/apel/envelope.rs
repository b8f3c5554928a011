//! The size of a message once it travels: SSM signs it (S/MIME, `openssl smime -sign -text`,
//! detached), and AMS carries the signed text base64-encoded inside a JSON publish request. AMS
//! refuses a request over its limit (1 MB) including all that wrapping, and one refused message
//! blocks ssmsend's whole queue; so the byte budget of the APEL message itself is what is left of
//! the limit once the wrapping is taken off. Pure arithmetic; the signature's size comes from
//! signing a probe with the real certificate (see [`super::sign`]) or from a configured allowance
//! when ssmsend signs.

/// AMS's limit on one publish request, in bytes (1 MB, counted in decimal to stay clear of it).
pub const DEFAULT_LIMIT: usize = 1_000_000;

/// What ssmsend's signature adds when we cannot measure it (the dirq mode: ssmsend signs with a
/// certificate we do not read). A host certificate's detached S/MIME signature is 3-6 kB;
/// 16 KiB leaves room for a long chain.
pub const DEFAULT_SIGNATURE_ALLOWANCE: usize = 16_384;

/// An `empaid` as ssmsend writes it: `<8 hex>/<14 hex>`.
const EMPAID_LEN: usize = 8 + 1 + 14;

/// The publish request around the base64 data, as [`super::ams`] writes it.
const AMS_BODY: &str = r#"{"messages":[{"attributes":{"empaid":""},"data":""}]}"#;

/// Bytes of the AMS publish request carrying a signed message of `signed_len` bytes.
pub fn ams_request_len(signed_len: usize) -> usize {
    AMS_BODY.len() + EMPAID_LEN + signed_len.div_ceil(3) * 4
}

/// The largest APEL message (bytes) whose signed form, `signature_overhead` bytes longer, fits an
/// AMS request of at most `limit` bytes; `None` when not even an empty one does.
pub fn max_message_bytes(limit: usize, signature_overhead: usize) -> Option<usize> {
    let base64_room = limit.checked_sub(AMS_BODY.len() + EMPAID_LEN)?;
    let signed_room = base64_room / 4 * 3;
    signed_room
        .checked_sub(signature_overhead)
        .filter(|room| *room > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_the_largest_message_that_fits_after_signing_and_encoding() {
        for limit in [1_000, 65_536, DEFAULT_LIMIT, 1_048_576] {
            for overhead in [0, 1, 2, 3, 431] {
                let budget = max_message_bytes(limit, overhead).unwrap();
                assert!(ams_request_len(budget + overhead) <= limit);
                assert!(
                    ams_request_len(budget + overhead + 3) > limit,
                    "{limit} {overhead}: {budget} is not the largest"
                );
            }
        }
        // The issue's numbers: a 999,194-byte message does not fit; the default budget is ~3/4.
        let budget = max_message_bytes(DEFAULT_LIMIT, 2_479).unwrap();
        assert!(budget < 999_194 && budget > 740_000, "{budget}");
        assert_eq!(max_message_bytes(50, 0), None);
        assert_eq!(max_message_bytes(1_000, 2_000), None);
    }

    #[test]
    fn the_request_length_is_what_the_ams_client_sends() {
        let body = serde_json::json!({
            "messages": [{
                "attributes": {"empaid": "0123abcd/0123abcd01234f"},
                "data": "QUJD",
            }]
        })
        .to_string();
        assert_eq!(body.len(), ams_request_len(3));
    }
}
