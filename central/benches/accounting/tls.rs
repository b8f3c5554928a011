//! A throw-away CA and a `localhost` certificate it signed, as a site's operator would set up.

pub struct Certificates {
    pub ca_pem: Vec<u8>,
    pub certificate_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

pub fn certificates() -> Certificates {
    let ca_key = rcgen::KeyPair::generate().expect("a CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("a self-signed CA");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().expect("a server key");
    let certificate = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .expect("server parameters")
        .signed_by(&key, &issuer)
        .expect("a server certificate");
    Certificates {
        ca_pem: ca.pem().into_bytes(),
        certificate_pem: certificate.pem().into_bytes(),
        key_pem: key.serialize_pem().into_bytes(),
    }
}
