//! A local HTTP server that answers like the OpenStack APIs, for the real OpenStack client.
//!
//! It stands in for a cloud where a test needs faults a real one cannot be made to produce on
//! demand (Keystone down, a token that expires mid-run, one service answering 503 or too slowly, one
//! project's quota unreadable). It serves the recorded responses of the small test cloud under
//! `provider/tests/fixtures/openstack/` (captured from the cloud `scripts/openstack/cloud.sh` starts), shaped
//! exactly as the services send them, on one port with a path prefix per service as DevStack lays
//! them out (`/identity/v3`, `/compute/v2.1`, `/placement`, `/image`):
//!
//! * `POST /identity/v3/auth/tokens`: 201 with `X-Subject-Token` and the token body whose catalog is
//!   the recorded one with its URLs pointed here; 401 for a wrong password;
//! * every other request needs `X-Auth-Token` of the current token, else 401 with
//!   keystonemiddleware's body; [`Behaviour::expire_token_after`] lets the token expire mid-run;
//! * Nova's `limit` / `marker` pagination with `<key>_links`, its version document (2.93), flavor
//!   access and per-project limits (the captured `/limits`); Placement's root document, providers and per-provider inventories,
//!   usages and traits (by the uuids in `INDEX.tsv`); Keystone projects; Glance v2 images;
//! * [`Behaviour::faults`]: an HTTP status (with the service's own error body) or a delay for any
//!   request whose path contains a given text.
//!
//! Responses that were not captured (token body, version documents, flavor access, images) follow the shapes of the OpenStack API reference.

#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure here is the test's failure"
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

mod answer;
mod routes;

/// The password the fake Keystone accepts.
pub const PASSWORD: &str = "fixture-admin-secret";

/// What a faulty request gets.
#[derive(Debug, Clone)]
pub enum Fault {
    /// This HTTP status with the service's usual error body.
    Status(u16),
    /// An answer only after this long (longer than the client's timeout: a timeout).
    Delay(Duration),
}

/// How the fake cloud behaves.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    /// `(text, fault)`: a request whose path contains `text` gets `fault` (first match wins).
    pub faults: Vec<(String, Fault)>,
    /// After this many accepted API requests the token expires: requests carrying it get 401 until
    /// the client authenticates again.
    pub expire_token_after: Option<usize>,
    /// Every token is refused by the APIs (Keystone still issues them).
    pub refuse_all_tokens: bool,
    /// Flavors served after the recorded ones (2.61 shape).
    pub extra_flavors: Vec<Value>,
    /// Servers served after the recorded ones (2.93 shape).
    pub extra_servers: Vec<Value>,
    /// Serve only `extra_servers`, none of the recorded ones (whose VMs still run, so their hours
    /// grow with the clock).
    pub only_extra_servers: bool,
    /// Serve the instance actions written for some servers (`nova-instance-actions-<id>.json`:
    /// atlas-gpu-1 stopped and paused); otherwise every server has none (it never changed state).
    pub instance_actions: bool,
}

/// What the server saw, for assertions.
#[derive(Debug, Default)]
pub struct Seen {
    /// `METHOD path?query` of every request.
    pub requests: Vec<String>,
    /// Tokens issued.
    pub tokens: u32,
    /// Requests refused with 401.
    pub unauthorized: u32,
}

/// A running fake cloud.
#[derive(Debug)]
pub struct FakeCloud {
    /// `http://127.0.0.1:PORT`, or `https://` when started with [`FakeCloud::start_tls`].
    pub base: String,
    pub seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeCloud {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The fixture folder, `provider/tests/fixtures/openstack/` (this crate's folder, `tests/`, is one
/// level below the workspace root, as `provider/` is).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../provider/tests/fixtures/openstack")
}

fn fixture(name: &str) -> Value {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("fixture {}: {err}", path.display()));
    serde_json::from_str(&text).expect("fixtures are JSON")
}

impl FakeCloud {
    /// Starts the cloud on a free port of 127.0.0.1.
    pub async fn start(behaviour: Behaviour) -> FakeCloud {
        Self::serve(behaviour, None).await
    }

    /// Starts the cloud over TLS with `pki`'s certificate (`https://127.0.0.1:PORT`), for tests of
    /// the CA a client trusts: only a client that trusts `pki`'s CA gets an answer.
    pub async fn start_tls(behaviour: Behaviour, pki: &crate::pki::Pki) -> FakeCloud {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![pki.cert_der.clone().into()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
            )
            .expect("the test certificate and key");
        Self::serve(behaviour, Some(TlsAcceptor::from(Arc::new(tls)))).await
    }

    async fn serve(behaviour: Behaviour, tls: Option<TlsAcceptor>) -> FakeCloud {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr: SocketAddr = listener.local_addr().expect("local address");
        let scheme = if tls.is_some() { "https" } else { "http" };
        let base = format!("{scheme}://{addr}");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let state = Arc::new(State {
            base: base.clone(),
            behaviour,
            seen: seen.clone(),
            token: Mutex::new(None),
            accepted: Mutex::new(0),
            rp_files: provider_files(),
        });
        let task = crate::fake_http::serve(listener, tls, state, |state, request| async move {
            state.answer(request).await
        });
        FakeCloud { base, seen, task }
    }

    /// A `clouds.yaml` with the entry `fake` for this cloud.
    pub fn clouds_yaml(&self, password: &str) -> String {
        clouds_yaml(&self.base, password)
    }

    /// Requests whose `METHOD path` contains `text`.
    pub fn count(&self, text: &str) -> usize {
        let seen = self.seen.lock().expect("seen lock");
        seen.requests.iter().filter(|r| r.contains(text)).count()
    }
}

/// A `clouds.yaml` with the entry `fake` for a cloud whose Keystone is under `base`.
pub fn clouds_yaml(base: &str, password: &str) -> String {
    format!(
        "clouds:\n  fake:\n    auth:\n      auth_url: {base}/identity/v3\n      username: admin\n      password: {password}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n    interface: public\n    identity_api_version: 3\n"
    )
}

/// Placement provider uuid -> the stem of its recorded files, from `INDEX.tsv`.
fn provider_files() -> BTreeMap<String, String> {
    let index = std::fs::read_to_string(fixtures().join("INDEX.tsv")).expect("INDEX.tsv");
    index
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let file = fields.first()?.strip_suffix("-inventories.json")?;
            let uuid = fields.get(3)?.split('/').nth(2)?;
            Some((uuid.to_owned(), file.to_owned()))
        })
        .collect()
}

#[derive(Debug)]
struct State {
    base: String,
    behaviour: Behaviour,
    seen: Arc<Mutex<Seen>>,
    /// The token the APIs accept now.
    token: Mutex<Option<String>>,
    /// API requests accepted so far (for expiry).
    accepted: Mutex<usize>,
    rp_files: BTreeMap<String, String>,
}
