//! A private CA for a federation without IGTF host certificates (`accelfed init central
//! --private-ca`): a self-signed CA whose certificate the sites trust, and the service's
//! certificate signed by it for the names the sites reach it by. ECDSA P-256 keys (rcgen with
//! ring), which rustls and OpenSSL both take.

use chrono::{Datelike, Days, NaiveDate, Utc};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// Years the CA is valid for.
pub const CA_YEARS: i32 = 20;
/// Years the service's certificate is valid for.
pub const SERVICE_YEARS: i32 = 5;

/// What `init central --private-ca` writes, as PEM.
#[derive(Debug)]
pub struct PrivatePki {
    pub ca_certificate: String,
    pub ca_key: String,
    /// The service's certificate followed by the CA's (leaf first).
    pub service_chain: String,
    pub service_key: String,
    /// The last day the service's certificate is valid, `YYYY-MM-DD`.
    pub service_expires: String,
}

/// The names of this host a site may reach it by, when none are given.
pub fn default_names() -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim();
        if !host.is_empty() && host != "localhost" {
            names.push(host.to_owned());
        }
    }
    names.extend(["localhost", "127.0.0.1", "::1"].map(str::to_owned));
    names
}

/// A new CA and a certificate for `names` (DNS names or IP addresses, the first also its common
/// name) signed by it.
pub fn generate(names: &[String]) -> Result<PrivatePki, String> {
    let first = names
        .first()
        .ok_or("no name for the service's certificate")?;
    let today = Utc::now().date_naive();
    // A day back, so a site whose clock is a little behind accepts it at once.
    let start = today.checked_sub_days(Days::new(1)).unwrap_or(today);
    // Years ahead; the 29th to 31st become the 28th, a day every month has.
    let later = |years: i32| {
        NaiveDate::from_ymd_opt(today.year() + years, today.month(), today.day().min(28))
            .unwrap_or(today)
    };
    let time =
        |date: NaiveDate| rcgen::date_time_ymd(date.year(), date.month() as u8, date.day() as u8);

    let ca_key = KeyPair::generate().map_err(|err| format!("CA key: {err}"))?;
    let mut ca = CertificateParams::default();
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.distinguished_name
        .push(DnType::OrganizationName, "accelfed");
    ca.distinguished_name.push(
        DnType::CommonName,
        format!("accelfed private CA for {first}"),
    );
    ca.not_before = time(start);
    ca.not_after = time(later(CA_YEARS));
    let ca_certificate = ca
        .self_signed(&ca_key)
        .map_err(|err| format!("CA certificate: {err}"))?;

    let key = KeyPair::generate().map_err(|err| format!("service key: {err}"))?;
    let mut service = CertificateParams::new(names.to_vec())
        .map_err(|err| format!("--name {}: {err}", names.join(", ")))?;
    service
        .distinguished_name
        .push(DnType::CommonName, first.as_str());
    service.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    service.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    service.use_authority_key_identifier_extension = true;
    service.not_before = time(start);
    let not_after = later(SERVICE_YEARS);
    service.not_after = time(not_after);
    let ca_key_pem = ca_key.serialize_pem();
    let issuer = Issuer::new(ca, ca_key);
    let certificate = service
        .signed_by(&key, &issuer)
        .map_err(|err| format!("service certificate: {err}"))?;
    Ok(PrivatePki {
        ca_certificate: ca_certificate.pem(),
        ca_key: ca_key_pem,
        service_chain: format!("{}{}", certificate.pem(), ca_certificate.pem()),
        service_key: key.serialize_pem(),
        service_expires: not_after.format("%Y-%m-%d").to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_leaf_then_ca_and_ip_names_are_addresses() {
        let pki = generate(&["central.example.org".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        assert_eq!(pki.service_chain.matches("BEGIN CERTIFICATE").count(), 2);
        assert!(pki.service_chain.ends_with(&pki.ca_certificate));
        assert!(pki.ca_key.contains("PRIVATE KEY"));
        assert!(pki.service_key.contains("PRIVATE KEY"));
    }

    #[test]
    fn default_names_include_the_loopback_names() {
        let names = default_names();
        assert!(names.contains(&"localhost".to_owned()));
        assert!(names.contains(&"127.0.0.1".to_owned()));
    }

    #[test]
    fn a_bad_name_is_refused() {
        assert!(generate(&[]).is_err());
        let err = generate(&["zürich.example.org".to_owned()]).unwrap_err();
        assert!(err.starts_with("--name"), "{err}");
    }
}
