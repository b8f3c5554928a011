use super::*;

#[test]
fn a_server_reads_its_parts_and_skips_the_rest() {
    let body = r#"{"id": "s-1", "name": "vm \"one\"", "status": "ACTIVE", "tenant_id": "p",
        "user_id": "u", "created": "2026-11-01T00:00:00Z", "updated": null,
        "addresses": {"net": [{"addr": "10.0.0.1"}]}, "OS-SRV-USG:launched_at": null,
        "flavor": {"vcpus": 4, "original_name": "g1", "extra_specs": {"a": "1", "b\"": "x\ny"}}}"#;
    let server: Server = serde_json::from_str(body).unwrap();
    assert_eq!(server.id(), "s-1");
    assert_eq!(server.name(), "vm \"one\"");
    assert_eq!(server.status(), "ACTIVE");
    assert_eq!(server.tenant_id(), "p");
    assert_eq!(server.user_id(), "u");
    assert_eq!(server.created(), "2026-11-01T00:00:00Z");
    assert_eq!(server.updated(), None);
    assert_eq!(server.terminated_at(), None);
    assert_eq!(server.launched(), Some(false));
    assert_eq!(server.flavor_id(), None);
    assert_eq!(server.flavor_name(), Some("g1"));
    let specs: std::collections::BTreeMap<String, String> =
        serde_json::from_str(server.flavor_specs().unwrap()).unwrap();
    assert_eq!(specs["b\""], "x\ny");
    // the same through a `Value`, where nothing can be borrowed
    let value: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(serde_json::from_value::<Server>(value).unwrap(), server);
}

#[test]
fn required_parts_are_required() {
    let err = serde_json::from_str::<Server>(r#"{"id": "s", "status": "ACTIVE"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `tenant_id`"), "{err}");
    let err = serde_json::from_str::<Server>(
        r#"{"id": "s", "status": "A", "tenant_id": "p", "created": "t"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("missing field `flavor`"), "{err}");
}
