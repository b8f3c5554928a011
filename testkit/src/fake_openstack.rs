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
    /// `http://127.0.0.1:PORT`.
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
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr: SocketAddr = listener.local_addr().expect("local address");
        let base = format!("http://{addr}");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let state = Arc::new(State {
            base: base.clone(),
            behaviour,
            seen: seen.clone(),
            token: Mutex::new(None),
            accepted: Mutex::new(0),
            rp_files: provider_files(),
        });
        let task = crate::fake_http::serve(listener, None, state, |state, request| async move {
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

impl State {
    async fn answer(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let query: BTreeMap<String, String> = request
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let line = format!(
            "{method} {}",
            request.uri().path_and_query().map_or("", |p| p.as_str())
        );
        self.seen.lock().expect("seen").requests.push(line.clone());
        let fault = self
            .behaviour
            .faults
            .iter()
            .find(|(text, _)| line.contains(text.as_str()))
            .map(|(_, fault)| fault.clone());
        match fault {
            Some(Fault::Status(code)) => return error(&path, code),
            Some(Fault::Delay(delay)) => tokio::time::sleep(delay).await,
            None => {}
        }
        if method == Method::POST && path == "/identity/v3/auth/tokens" {
            let body = request
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            return self.issue_token(&body);
        }
        let token = request
            .headers()
            .get("x-auth-token")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if !self.accept(token.as_deref()) {
            self.seen.lock().expect("seen").unauthorized += 1;
            return respond(
                StatusCode::UNAUTHORIZED,
                json!({"error": {"code": 401, "title": "Unauthorized",
                    "message": "The request you have made requires authentication."}}),
            );
        }
        self.route(&path, &query)
    }

    fn issue_token(&self, body: &[u8]) -> Response<Full<Bytes>> {
        let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let password = &request["auth"]["identity"]["password"]["user"]["password"];
        if password != PASSWORD {
            return respond(
                StatusCode::UNAUTHORIZED,
                json!({"error": {"code": 401, "title": "Unauthorized",
                    "message": "The request you have made requires authentication."}}),
            );
        }
        let issued = {
            let mut seen = self.seen.lock().expect("seen");
            seen.tokens += 1;
            seen.tokens
        };
        let value = format!("gAAAAABfixture-token-{issued}");
        *self.token.lock().expect("token") = Some(value.clone());
        *self.accepted.lock().expect("accepted") = 0;
        let mut catalog = fixture("keystone-catalog.json")["catalog"].clone();
        for service in catalog.as_array_mut().into_iter().flatten() {
            for endpoint in service["endpoints"].as_array_mut().into_iter().flatten() {
                let url = endpoint["url"].as_str().unwrap_or("").to_owned();
                endpoint["url"] = json!(self.rewrite(&url));
            }
        }
        let body = json!({"token": {
            "methods": ["password"],
            "user": {"domain": {"id": "default", "name": "Default"},
                     "id": "a24cbe8c1d5648da830f405359b47a8a", "name": "admin", "password_expires_at": null},
            "audit_ids": ["fixture-audit"],
            "expires_at": "2099-01-01T00:00:00.000000Z",
            "issued_at": "2026-11-22T06:00:00.000000Z",
            "project": {"domain": {"id": "default", "name": "Default"},
                        "id": "629a36fae7be4b96be5e5b3d8dee2e91", "name": "admin"},
            "is_domain": false,
            "roles": [{"id": "a1", "name": "admin"}, {"id": "r1", "name": "reader"}, {"id": "m1", "name": "member"}],
            "catalog": catalog,
        }});
        let mut response = respond(StatusCode::CREATED, body);
        response.headers_mut().insert(
            "x-subject-token",
            value.parse().expect("a header-safe token"),
        );
        response
    }

    /// The recorded cloud's URL of a service, pointed at this server.
    fn rewrite(&self, url: &str) -> String {
        let base = &self.base;
        url.replace("http://127.0.0.1:5000", &format!("{base}/identity"))
            .replace("http://127.0.0.1:8774", &format!("{base}/compute"))
            .replace("http://127.0.0.1:8778", &format!("{base}/placement"))
            .replace("http://127.0.0.1:9292", &format!("{base}/image"))
            .replace("http://127.0.0.1:9696", &format!("{base}/network"))
    }

    fn accept(&self, token: Option<&str>) -> bool {
        if self.behaviour.refuse_all_tokens {
            return false;
        }
        let mut current = self.token.lock().expect("token");
        if token.is_none() || current.as_deref() != token {
            return false;
        }
        let mut accepted = self.accepted.lock().expect("accepted");
        *accepted += 1;
        if self
            .behaviour
            .expire_token_after
            .is_some_and(|limit| *accepted > limit)
            && self.seen.lock().expect("seen").tokens == 1
        {
            // The first token expires once; later tokens live for the rest of the run.
            *current = None;
            return false;
        }
        true
    }

    fn route(&self, path: &str, query: &BTreeMap<String, String>) -> Response<Full<Bytes>> {
        let ok = |value: Value| respond(StatusCode::OK, value);
        match path {
            "/identity/v3/projects" => {
                let mut projects = fixture("keystone-projects.json");
                projects["links"]["self"] = json!(format!("{}/identity/v3/projects", self.base));
                ok(projects)
            }
            "/compute/v2.1/limits" => {
                // The captured document, as Nova answers an admin asking for one project's limits
                // (`tenant_id`); quotas set to what the tests expect of a share.
                let mut limits = fixture("nova-limits.json");
                if query.contains_key("tenant_id") {
                    limits["limits"]["absolute"]["maxTotalInstances"] = json!(10);
                    limits["limits"]["absolute"]["maxTotalCores"] = json!(64);
                }
                ok(limits)
            }
            "/compute/v2.1/" | "/compute/v2.1" => ok(json!({"version": {
                "id": "v2.1", "status": "CURRENT", "version": "2.93", "min_version": "2.1",
                "updated": "2013-07-23T11:33:21Z",
                "links": [{"rel": "self", "href": format!("{}/compute/v2.1/", self.base)}],
                "media-types": [{"base": "application/json",
                    "type": "application/vnd.openstack.compute+json;version=2.1"}]}})),
            "/compute/v2.1/flavors/detail" => {
                let mut items = self.recorded("nova-flavors-detail-2.61.json", "flavors");
                items.extend(self.behaviour.extra_flavors.iter().cloned());
                self.page("flavors", items, path, query)
            }
            "/compute/v2.1/servers/detail" => {
                let mut items =
                    if query.contains_key("changes-since") || self.behaviour.only_extra_servers {
                        Vec::new()
                    } else {
                        self.recorded("nova-servers-detail-alltenants-2.93.json", "servers")
                    };
                items.extend(self.behaviour.extra_servers.iter().cloned());
                self.page("servers", items, path, query)
            }
            "/placement/" | "/placement" => ok(json!({"versions": [{
                "id": "v1.0", "max_version": "1.39", "min_version": "1.0", "status": "CURRENT",
                "links": [{"rel": "self", "href": ""}]}]})),
            "/placement/resource_providers" => {
                ok(fixture("placement-resource_providers-1.39.json"))
            }
            "/image/v2/images" => ok(json!({
                "images": [{
                    "id": "0bfa391d-72bd-4389-854d-35bdefb5bdf8", "name": "ubuntu-22.04-cuda-12.2",
                    "status": "active", "visibility": "public", "owner": "629a36fae7be4b96be5e5b3d8dee2e91",
                    "os_distro": "ubuntu", "os_version": "22.04", "architecture": "x86_64",
                    "gpu_driver_version": "535.104.05", "cuda_version": "12.2",
                    "container_format": "bare", "disk_format": "qcow2", "min_disk": 0, "min_ram": 0,
                    "protected": false, "tags": [], "size": 21430272,
                    "created_at": "2026-11-22T03:20:00Z", "updated_at": "2026-11-22T03:20:01Z",
                    "self": "/v2/images/0bfa391d-72bd-4389-854d-35bdefb5bdf8",
                    "file": "/v2/images/0bfa391d-72bd-4389-854d-35bdefb5bdf8/file",
                    "schema": "/v2/schemas/image"}],
                "first": "/v2/images?limit=1000", "schema": "/v2/schemas/images"})),
            _ => self.per_object(path),
        }
    }

    /// Flavor access and per-provider Placement documents.
    fn per_object(&self, path: &str) -> Response<Full<Bytes>> {
        let ok = |value: Value| respond(StatusCode::OK, value);
        if let Some(rest) = path.strip_prefix("/compute/v2.1/flavors/")
            && let Some(id) = rest.strip_suffix("/os-flavor-access")
        {
            return ok(json!({"flavor_access": [
                {"flavor_id": id, "tenant_id": "390d564ccd6c4875a2cd4d698a7bc9d0"}]}));
        }
        if let Some(rest) = path.strip_prefix("/placement/resource_providers/")
            && let Some((uuid, what)) = rest.split_once('/')
            && let Some(stem) = self.rp_files.get(uuid)
        {
            return ok(fixture(&format!("{stem}-{what}.json")));
        }
        error(path, 404)
    }

    fn recorded(&self, file: &str, key: &str) -> Vec<Value> {
        let text = serde_json::to_string(&fixture(file)[key]).expect("JSON");
        serde_json::from_str(&self.rewrite(&text)).expect("JSON")
    }

    /// Nova's pagination: items after `marker`, at most `limit`, and a `next` link when more remain.
    fn page(
        &self,
        key: &str,
        items: Vec<Value>,
        path: &str,
        query: &BTreeMap<String, String>,
    ) -> Response<Full<Bytes>> {
        let start = match query.get("marker") {
            Some(marker) => match items.iter().position(|i| i["id"] == marker.as_str()) {
                Some(found) => found + 1,
                None => {
                    return respond(
                        StatusCode::BAD_REQUEST,
                        json!({"badRequest": {"code": 400,
                            "message": format!("marker [{marker}] not found")}}),
                    );
                }
            },
            None => 0,
        };
        let limit: usize = query
            .get("limit")
            .and_then(|l| l.parse().ok())
            .unwrap_or(1000);
        let end = (start + limit).min(items.len());
        let mut body = json!({ key: items[start..end] });
        if end < items.len() && end > start {
            let mut next: Vec<String> = query
                .iter()
                .filter(|(k, _)| *k != "marker")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            next.push(format!(
                "marker={}",
                items[end - 1]["id"].as_str().unwrap_or("")
            ));
            body[format!("{key}_links")] = json!([{"rel": "next",
                "href": format!("{}{}?{}", self.base, path, next.join("&"))}]);
        }
        respond(StatusCode::OK, body)
    }
}

/// The error body each service sends with `code`.
fn error(path: &str, code: u16) -> Response<Full<Bytes>> {
    let title = StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let body = if path.starts_with("/compute") {
        let key = if code >= 500 {
            "computeFault"
        } else {
            "itemNotFound"
        };
        json!({ key: {"code": code, "message": format!("{title} (injected by the test)")}})
    } else if path.starts_with("/placement") {
        json!({"errors": [{"status": code, "title": title, "code": "placement.undefined_code",
            "detail": format!("{title} (injected by the test)"), "request_id": "req-fixture"}]})
    } else {
        json!({"error": {"code": code, "title": title, "message": format!("{title} (injected by the test)")}})
    };
    respond(
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body,
    )
}

fn respond(code: StatusCode, body: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response")
}
