//! The service certificate's validity period, checked where the certificate is taken on
//! (`serve`, `validate --central`, `init central`) and watched while the service runs. IGTF host
//! certificates are renewed yearly; one that lapses unseen turns away every site at once, and each
//! site then reads a TLS error about its own connection. So an expired or not yet valid
//! certificate is refused with its dates, one about to expire is warned about beforehand, and its
//! end is a metric (`accelfed_tls_certificate_expiry_timestamp_seconds`) to alert on.

use chrono::{DateTime, TimeDelta, Utc};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// When the leaf certificate may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    pub not_before: DateTime<Utc>,
    pub not_after: DateTime<Utc>,
}

/// What a certificate's dates say at a given time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Valid, and more than the warning period from its end.
    Valid,
    /// Valid, but ending within the warning period: a warning to log.
    Expiring(String),
    /// Not usable now: the reason, with its dates.
    Unusable(String),
}

impl Validity {
    /// The validity of the first (leaf) certificate of a PEM chain.
    pub fn of_leaf(certificate_pem: &[u8]) -> Result<Self, String> {
        let leaf = CertificateDer::pem_slice_iter(certificate_pem)
            .next()
            .ok_or_else(|| "no PEM certificate in the file".to_owned())?
            .map_err(|error| error.to_string())?;
        let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref())
            .map_err(|error| format!("the leaf certificate cannot be read: {error}"))?;
        let time = |asn1: x509_parser::time::ASN1Time| {
            DateTime::from_timestamp(asn1.timestamp(), 0)
                .ok_or_else(|| format!("a validity date out of range ({})", asn1.timestamp()))
        };
        Ok(Self {
            not_before: time(parsed.validity().not_before)?,
            not_after: time(parsed.validity().not_after)?,
        })
    }

    /// The certificate's standing at `now`, warning `warning_days` before its end (0: never).
    pub fn standing(&self, now: DateTime<Utc>, warning_days: u32) -> Standing {
        let rfc3339 = |at: DateTime<Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        if now > self.not_after {
            return Standing::Unusable(format!(
                "the certificate expired on {} ({} days ago); sites refuse it: renew it",
                rfc3339(self.not_after),
                (now - self.not_after).num_days()
            ));
        }
        if now < self.not_before {
            return Standing::Unusable(format!(
                "the certificate is not valid before {} (in {} days; is this host's clock right?)",
                rfc3339(self.not_before),
                (self.not_before - now).num_days()
            ));
        }
        let left = self.not_after - now;
        if warning_days > 0 && left < TimeDelta::days(i64::from(warning_days)) {
            return Standing::Expiring(format!(
                "the certificate expires on {}, in {} days: renew it before sites are refused",
                rfc3339(self.not_after),
                left.num_days()
            ));
        }
        Standing::Valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validity(from: &str, to: &str) -> Validity {
        let at = |text: &str| {
            DateTime::parse_from_rfc3339(text)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        Validity {
            not_before: at(from),
            not_after: at(to),
        }
    }

    fn at(text: &str) -> DateTime<Utc> {
        validity(text, text).not_before
    }

    #[test]
    fn dates_decide_the_standing() {
        let year = validity("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z");
        assert_eq!(
            year.standing(at("2026-06-01T00:00:00Z"), 30),
            Standing::Valid
        );
        let Standing::Expiring(why) = year.standing(at("2026-12-12T00:00:00Z"), 30) else {
            panic!("20 days before the end is within 30")
        };
        assert!(
            why.contains("2027-01-01T00:00:00Z") && why.contains("in 20 days"),
            "{why}"
        );
        assert_eq!(
            year.standing(at("2026-12-12T00:00:00Z"), 0),
            Standing::Valid
        );
        let Standing::Unusable(why) = year.standing(at("2027-01-03T00:00:00Z"), 30) else {
            panic!("expired")
        };
        assert!(
            why.contains("expired on 2027-01-01T00:00:00Z (2 days ago)"),
            "{why}"
        );
        let Standing::Unusable(why) = year.standing(at("2025-12-01T00:00:00Z"), 30) else {
            panic!("not yet valid")
        };
        assert!(
            why.contains("not valid before 2026-01-01T00:00:00Z"),
            "{why}"
        );
    }

    #[test]
    fn garbage_is_no_certificate() {
        assert!(Validity::of_leaf(b"not a certificate").is_err());
    }
}
