//! The fake's front: Keystone's token issue, the token check (with expiry mid-run) and the
//! configured faults, before a request reaches its route.

use super::routes::{error, respond};
use super::*;

impl State {
    pub(super) async fn answer(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
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

    pub(super) fn issue_token(&self, body: &[u8]) -> Response<Full<Bytes>> {
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
    pub(super) fn rewrite(&self, url: &str) -> String {
        let base = &self.base;
        url.replace("http://127.0.0.1:5000", &format!("{base}/identity"))
            .replace("http://127.0.0.1:8774", &format!("{base}/compute"))
            .replace("http://127.0.0.1:8778", &format!("{base}/placement"))
            .replace("http://127.0.0.1:9292", &format!("{base}/image"))
            .replace("http://127.0.0.1:9696", &format!("{base}/network"))
    }

    pub(super) fn accept(&self, token: Option<&str>) -> bool {
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
}
