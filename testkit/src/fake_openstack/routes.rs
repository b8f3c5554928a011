//! The fake's answers per path: recorded responses with Nova's pagination, per-object documents,
//! and each service's own error bodies.

use super::*;

impl State {
    pub(super) fn route(
        &self,
        path: &str,
        query: &BTreeMap<String, String>,
    ) -> Response<Full<Bytes>> {
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

    /// Flavor access, servers' instance actions and per-provider Placement documents.
    pub(super) fn per_object(&self, path: &str) -> Response<Full<Bytes>> {
        let ok = |value: Value| respond(StatusCode::OK, value);
        if let Some(rest) = path.strip_prefix("/compute/v2.1/flavors/")
            && let Some(id) = rest.strip_suffix("/os-flavor-access")
        {
            return ok(json!({"flavor_access": [
                {"flavor_id": id, "tenant_id": "390d564ccd6c4875a2cd4d698a7bc9d0"}]}));
        }
        // A server's instance actions: the fixture written for it, else none.
        if let Some(rest) = path.strip_prefix("/compute/v2.1/servers/")
            && let Some(id) = rest.strip_suffix("/os-instance-actions")
        {
            let name = format!("nova-instance-actions-{id}.json");
            let written = self.behaviour.instance_actions && super::fixtures().join(&name).exists();
            return ok(if written {
                fixture(&name)
            } else {
                json!({"instanceActions": []})
            });
        }
        if let Some(rest) = path.strip_prefix("/placement/resource_providers/")
            && let Some((uuid, what)) = rest.split_once('/')
            && let Some(stem) = self.rp_files.get(uuid)
        {
            return ok(fixture(&format!("{stem}-{what}.json")));
        }
        error(path, 404)
    }

    pub(super) fn recorded(&self, file: &str, key: &str) -> Vec<Value> {
        let text = serde_json::to_string(&fixture(file)[key]).expect("JSON");
        serde_json::from_str(&self.rewrite(&text)).expect("JSON")
    }

    /// Nova's pagination: items after `marker`, at most `limit`, and a `next` link when more remain.
    pub(super) fn page(
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
pub(super) fn error(path: &str, code: u16) -> Response<Full<Bytes>> {
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

pub(super) fn respond(code: StatusCode, body: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response")
}
