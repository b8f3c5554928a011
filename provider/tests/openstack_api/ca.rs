//! `ca` of `[[openstack]]`: a cloud whose Keystone and services answer over TLS with a private CA
//! is read when the setting names that CA (also over a `cacert` that names another), and refused,
//! as a TLS failure no retry cures, without it.

use accelfed_provider::openstack::{OpenstackError, provide};
use accelfed_testkit::pki::{Pki, unrelated_ca_pem};

use super::server::{Behaviour, FakeCloud, PASSWORD};
use super::{Setup, setup};

/// `setup`'s configuration with `ca` set to `path`, and a `cacert` in `clouds.yaml` when given.
fn with_ca(cloud: &FakeCloud, ca: Option<&std::path::Path>, cacert: Option<&str>) -> Setup {
    let mut setup = setup(cloud, 5);
    if let Some(cacert) = cacert {
        let file = setup.dir.path().join("clouds.yaml");
        let text = cloud.clouds_yaml(PASSWORD) + &format!("    cacert: {cacert}\n");
        std::fs::write(file, text).unwrap();
    }
    setup.config.ca = ca.map(std::path::Path::to_path_buf);
    setup
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_with_a_private_ca_is_read_through_ca_and_refused_without_it() {
    let pki = Pki::generate();
    let cloud = FakeCloud::start_tls(Behaviour::default(), &pki).await;
    assert!(cloud.base.starts_with("https://"), "{}", cloud.base);
    let dir = tempfile::tempdir().unwrap();
    let files = pki.write(dir.path());
    // A cacert naming another CA: `ca` wins over it.
    let other = dir.path().join("other-ca.pem");
    std::fs::write(&other, unrelated_ca_pem("another CA")).unwrap();

    let trusted = with_ca(&cloud, Some(&files.ca), Some(&other.display().to_string()));
    let provided = provide(&trusted.config).await.unwrap();
    assert!(provided.failures.is_empty(), "{:?}", provided.failures);
    assert_eq!(provided.mapped.service.shares.len(), 2);
    assert_eq!(cloud.seen.lock().unwrap().tokens, 1);

    for untrusted in [
        with_ca(&cloud, None, None),
        with_ca(&cloud, None, Some(&other.display().to_string())),
    ] {
        let err = provide(&untrusted.config).await.unwrap_err();
        assert!(
            !matches!(err, OpenstackError::Credentials(_)),
            "a transport failure, not the credentials: {err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("retry will not help"), "{text}");
        assert!(text.contains("UnknownIssuer"), "{text}");
    }
    // The refused runs never got a token.
    assert_eq!(cloud.seen.lock().unwrap().tokens, 1);
}
