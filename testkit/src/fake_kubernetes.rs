//! A local HTTPS server that answers like the Kubernetes API server, for the real `kube` client.
//!
//! It stands in for a real API server because none can be installed on the machines this project
//! is built and tested on. It serves the recorded lists under `provider/tests/fixtures/kubernetes/`, which
//! are shaped exactly as the API returns them (`kind: NodeList`, `apiVersion: v1`, `metadata`,
//! `items`), and behaves as the API does where the client depends on it:
//!
//! * `limit` and `continue` pagination, with `metadata.continue` and `remainingItemCount`;
//! * `410 Gone` with a `Status` body (`reason: Expired`) for an expired continue token, once per
//!   path named in [`Behaviour::expire_once`];
//! * `401 Unauthorized` with a `Status` body unless `Authorization: Bearer <token>` matches;
//! * TLS with a certificate for 127.0.0.1 signed by the test CA ([`crate::pki`]).
//!
//! It also answers Prometheus's `/api/v1/query` from `dcgm/<scheme>/<metric>.json` fixtures, for the DCGM path.
//! The fixtures stay beside the provider's tests (`provider/tests/fixtures/kubernetes/`); see
//! [`fixtures`].

#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure here is the test's failure"
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// How the fake server behaves.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    /// The bearer token it accepts.
    pub token: String,
    /// API paths whose first continued request answers 410 Gone.
    pub expire_once: Vec<String>,
    /// API paths whose continued requests always answer 410 Gone.
    pub expire_always: Vec<String>,
    /// Serve lists from another folder of fixtures (`fixtures/kubernetes/<folder>`); lists the
    /// folder lacks come from `cluster/`. [`FakeApi::serve_folder`] switches it while running.
    pub folder: Option<String>,
    /// The DCGM exporter's naming scheme Prometheus answers in: `fixtures/kubernetes/dcgm/<this>`
    /// (`None`: `legacy`, the names up to dcgm-exporter 4.8; `renamed`: 4.9's).
    pub dcgm: Option<String>,
}

/// What the server saw, for assertions.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every request as `GET <path and query>`.
    pub requests: Vec<String>,
    pub gone: u32,
    pub unauthorized: u32,
}

/// A running fake API server.
#[derive(Debug)]
pub struct FakeApi {
    pub url: String,
    pub ca_pem: String,
    pub seen: Arc<Mutex<Seen>>,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The fixture folder, `provider/tests/fixtures/kubernetes/` (this crate's folder, `tests/`, is one
/// level below the workspace root, as `provider/` is).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../provider/tests/fixtures/kubernetes")
}

/// The fixture pods with every running pod (and running container) finished at `finished` (an
/// RFC 3339 instant after they started), so metered GPU-hours do not depend on when a test runs.
pub fn pods_finished_at(finished: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join("cluster/pods.json")).unwrap();
    let mut list: Value = serde_json::from_str(&text).unwrap();
    for pod in list["items"].as_array_mut().unwrap() {
        // `get_mut`, not indexing: indexing would add `null` where the fixture has no field.
        let Some(status) = pod.get_mut("status") else {
            continue;
        };
        if status["phase"] != "Running" {
            continue;
        }
        status["phase"] = json!("Succeeded");
        for key in ["containerStatuses", "initContainerStatuses"] {
            let containers = status.get_mut(key).and_then(Value::as_array_mut);
            for container in containers.into_iter().flatten() {
                let state = &mut container["state"];
                if let Some(started) = state["running"]["startedAt"].as_str().map(str::to_owned) {
                    *state = json!({"terminated": {"exitCode": 0, "reason": "Completed",
                        "startedAt": started, "finishedAt": finished}});
                }
            }
        }
    }
    list
}

impl FakeApi {
    /// Starts the server on a free port of 127.0.0.1.
    pub async fn start(behaviour: Behaviour) -> FakeApi {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let pki = crate::pki::Pki::generate();
        let tls = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![pki.cert_der.clone().into()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
            )
            .unwrap();
        let acceptor = TlsAcceptor::from(Arc::new(tls));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let state = Arc::new(State {
            folder: Mutex::new(behaviour.folder.clone()),
            behaviour,
            seen: seen.clone(),
            expired: Mutex::new(Vec::new()),
            lists: Mutex::new(BTreeMap::new()),
        });
        let task = crate::fake_http::serve(
            listener,
            Some(acceptor),
            state.clone(),
            |state, request| async move { state.answer(&request) },
        );
        FakeApi {
            url: format!("https://{addr}"),
            ca_pem: pki.ca_pem,
            seen,
            state,
            task,
        }
    }

    /// From now on serves the lists of `fixtures/kubernetes/<folder>` (falling back to `cluster/`),
    /// as the cluster looks at a later time.
    pub fn serve_folder(&self, folder: &str) {
        *self.state.folder.lock().unwrap() = Some(folder.to_owned());
        self.state.lists.lock().unwrap().clear();
    }

    /// From now on serves `list` (a whole list object, e.g. a changed copy of a fixture) for
    /// `/api/v1/<file>`, until [`FakeApi::serve_folder`] is called.
    pub fn serve_list(&self, file: &str, list: Value) {
        self.state
            .lists
            .lock()
            .unwrap()
            .insert(file.to_owned(), list);
    }

    /// A kubeconfig for this server with two contexts: `fixture` (the right token) and the
    /// file's current context `stale` (a wrong token), so tests prove the context is selectable.
    pub fn kubeconfig(&self, token: &str) -> String {
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: stale\nclusters:\n- name: fake\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\ncontexts:\n- name: stale\n  context:\n    cluster: fake\n    user: old\n- name: fixture\n  context:\n    cluster: fake\n    user: reader\nusers:\n- name: old\n  user:\n    token: expired-token\n- name: reader\n  user:\n    token: {token}\n",
            url = self.url
        )
    }
}

#[derive(Debug)]
struct State {
    behaviour: Behaviour,
    /// The fixture folder served now.
    folder: Mutex<Option<String>>,
    seen: Arc<Mutex<Seen>>,
    /// Paths that already answered 410 once.
    expired: Mutex<Vec<String>>,
    lists: Mutex<BTreeMap<String, Value>>,
}

impl State {
    fn answer(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let path = request.uri().path().to_owned();
        let query: BTreeMap<String, String> = request
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k.to_owned(), decode(v)))
            .collect();
        self.seen.lock().unwrap().requests.push(format!(
            "GET {}",
            request.uri().path_and_query().map_or("", |p| p.as_str())
        ));
        let authorised = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            == Some(&format!("Bearer {}", self.behaviour.token));
        if path == "/api/v1/query" {
            return self.prometheus(query.get("query").map_or("", String::as_str));
        }
        if !authorised {
            self.seen.lock().unwrap().unauthorized += 1;
            return status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized");
        }
        let Some(file) = path.strip_prefix("/api/v1/") else {
            return status(
                StatusCode::NOT_FOUND,
                "NotFound",
                "the server could not find the requested resource",
            );
        };
        let list = {
            let mut lists = self.lists.lock().unwrap();
            lists
                .entry(file.to_owned())
                .or_insert_with(|| {
                    let folder = self.folder.lock().unwrap().clone();
                    let name = format!("{file}.json");
                    let path = folder
                        .map(|folder| fixtures().join(folder).join(&name))
                        .filter(|path| path.exists())
                        .unwrap_or_else(|| fixtures().join("cluster").join(&name));
                    let text = std::fs::read_to_string(&path)
                        .unwrap_or_else(|err| panic!("fixture {}: {err}", path.display()));
                    serde_json::from_str(&text).unwrap()
                })
                .clone()
        };
        let offset: usize = match query.get("continue") {
            Some(token) => {
                let always = self.behaviour.expire_always.contains(&path);
                let once = self.behaviour.expire_once.contains(&path)
                    && !self.expired.lock().unwrap().contains(&path);
                if always || once {
                    self.expired.lock().unwrap().push(path.clone());
                    self.seen.lock().unwrap().gone += 1;
                    return status(
                        StatusCode::GONE,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                    );
                }
                token.parse().unwrap()
            }
            None => 0,
        };
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let limit: usize = query
            .get("limit")
            .map_or(items.len(), |l| l.parse().unwrap());
        let end = (offset + limit).min(items.len());
        let mut metadata = json!({"resourceVersion": "48213"});
        if end < items.len() {
            metadata["continue"] = json!(end.to_string());
            metadata["remainingItemCount"] = json!(items.len() - end);
        }
        let page = json!({
            "kind": list["kind"],
            "apiVersion": "v1",
            "metadata": metadata,
            "items": items[offset..end],
        });
        respond(StatusCode::OK, page.to_string())
    }

    /// An instant query's answer: the fixture named after the DCGM metric the query asks for, in
    /// the scheme's folder; a metric the folder lacks has no series (as Prometheus answers a
    /// metric no exporter serves).
    fn prometheus(&self, query: &str) -> Response<Full<Bytes>> {
        let name: String = query
            .find("DCGM_")
            .map(|at| {
                query[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect()
            })
            .unwrap_or_default();
        let scheme = self.behaviour.dcgm.as_deref().unwrap_or("legacy");
        let path = fixtures()
            .join("dcgm")
            .join(scheme)
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#.to_owned()
        });
        respond(StatusCode::OK, text)
    }
}

/// A `Status` object, as the API server sends with every error.
fn status(code: StatusCode, reason: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    });
    respond(code, body.to_string())
}

fn respond(code: StatusCode, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(byte) = u8::from_str_radix(&value[i + 1..i + 3], 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
