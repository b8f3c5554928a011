use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::openstack::api::Server;
use crate::openstack::client::read_nova_page;

fn skip_all(text: &str) -> Result<(), ScanError> {
    let mut scanner = Scanner::new(text.as_bytes());
    scanner.skip_value()?;
    scanner.finish()
}

#[test]
fn malformed_values_are_named_with_their_line_and_column() {
    for (text, message, line, column) in [
        ("{\"a\": \"b}", "unterminated string", 1, 7),
        ("{\"a\": [1, 2}", "unexpected '}'", 1, 12),
        ("[1,\n {\"x\": 1]", "unexpected ']'", 2, 9),
        ("{\"a\": 1", "unterminated object or array", 1, 8),
        ("{\"a\": 'x'}", "unexpected '\\''", 1, 7),
        ("tru", "expected a value", 1, 1),
        ("1x", "expected a value", 1, 1),
        ("1 x", "trailing characters", 1, 3),
        ("", "expected a value, found the end", 1, 1),
        ("\"a\\", "unterminated string", 1, 1),
    ] {
        let err = skip_all(text).unwrap_err();
        assert_eq!(
            (err.message.as_str(), err.line, err.column),
            (message, line, column),
            "{text:?}: {err}"
        );
    }
    let deep = "[".repeat(65) + &"]".repeat(65);
    assert_eq!(skip_all(&deep).unwrap_err().message, "nested too deep");
}

/// A server as Nova 2.93 sends it, with `extra` merged in.
fn server(extra: Value) -> Value {
    let mut server = json!({
        "id": "0b3e1f9a-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
        "name": "vm-1",
        "status": "ACTIVE",
        "tenant_id": "p1",
        "user_id": "u1",
        "created": "2026-11-01T00:00:00Z",
        "updated": "2026-11-02T00:00:00Z",
        "addresses": {"net": [{"version": 4, "addr": "10.0.0.1", "OS-EXT-IPS:type": "fixed"}]},
        "links": [{"rel": "self", "href": "http://nova/v2.1/servers/0b3e"}],
        "OS-SRV-USG:launched_at": "2026-11-01T00:00:05.000000",
        "OS-SRV-USG:terminated_at": null,
        "metadata": {},
        "locked": false,
        "progress": 0,
        "flavor": {"vcpus": 8, "ram": 65536, "disk": 40, "ephemeral": 0, "swap": 0,
                   "original_name": "g1.v100x2",
                   "extra_specs": {"pci_passthrough:alias": "nvidia-v100:2"}},
    });
    if let (Value::Object(server), Value::Object(extra)) = (&mut server, extra) {
        server.extend(extra);
    }
    server
}

fn page(servers: &[Value]) -> Vec<u8> {
    serde_json::to_vec_pretty(&json!({"servers": servers, "servers_links": [
        {"rel": "next", "href": "http://nova/v2.1/servers/detail?limit=2&marker=m-9"}]}))
    .unwrap()
}

/// What the scanner read equals what serde reads from the same server.
fn same_as_serde(servers: &[Value]) {
    let body = page(servers);
    let scanned = read_nova_page::<Server>(&body).unwrap();
    assert_eq!(scanned.next_marker().as_deref(), Some("m-9"));
    assert_eq!(scanned.items.len(), servers.len());
    for (scanned, value) in scanned.items.iter().zip(servers) {
        let read: Server = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(scanned.id(), read.id());
        assert_eq!(scanned.name(), read.name());
        assert_eq!(scanned.status(), read.status());
        assert_eq!(scanned.tenant_id(), read.tenant_id());
        assert_eq!(scanned.user_id(), read.user_id());
        assert_eq!(scanned.created(), read.created());
        assert_eq!(scanned.updated(), read.updated());
        assert_eq!(scanned.terminated_at(), read.terminated_at());
        assert_eq!(scanned.launched(), read.launched());
        assert_eq!(scanned.flavor_id(), read.flavor_id());
        assert_eq!(scanned.flavor_name(), read.flavor_name());
        // the specs are kept as text: compare what they say
        let specs = |server: &Server| {
            server
                .flavor_specs()
                .map(|text| serde_json::from_str::<Value>(text).unwrap())
        };
        assert_eq!(specs(scanned), specs(&read));
    }
}

#[test]
fn servers_read_as_serde_reads_them() {
    same_as_serde(&[
        server(json!({})),
        server(
            json!({"name": "vm \"quoted\" \\ \u{e9}\u{1F600}\n", "OS-SRV-USG:launched_at": null,
            "updated": null, "user_id": null, "OS-SRV-USG:terminated_at": "2026-11-03T00:00:00.000000"}),
        ),
        server(json!({"flavor": {"id": "42", "links": []}})),
        server(json!({"flavor": {"original_name": "x", "extra_specs": null}})),
    ]);
    // a key written with an escape is the same key
    let body = br#"{"servers": [{"\u0069d": "s", "status": "A", "tenant_id": "p",
        "created": "t", "flavor": {"id": "f"}}]}"#;
    let page = read_nova_page::<Server>(body).unwrap();
    assert_eq!(page.items[0].id(), "s");
    assert_eq!(page.next_marker(), None);
}

#[test]
fn malformed_servers_are_refused_with_a_position() {
    for (body, message) in [
        (
            &br#"{"servers": [{"id": "s", "status": "A", "tenant_id": "p", "created": "t"}]}"#[..],
            "server without `flavor`",
        ),
        (
            br#"{"servers": [{"id": 7, "status": "A"}]}"#,
            "server Id: expected a string or null",
        ),
        (
            br#"{"servers": [{"id": "s", "flavor": {"extra_specs": "x"}}]}"#,
            "extra specs: expected an object or null",
        ),
        (br#"{"servers": [{"id": "\ud800x"}]}"#, "bad string"),
        (
            b"{\"servers\": [{\"id\": \"a\xff\"}]}",
            "string is not UTF-8",
        ),
        (br#"{"servers_links": []}"#, "a Nova page without `servers`"),
        (
            br#"{"servers": [] "x": 1}"#,
            "expected ',' or '}' in a Nova page",
        ),
        (br#"{"servers": []} []"#, "trailing characters"),
    ] {
        let err = read_nova_page::<Server>(body).unwrap_err();
        assert!(
            err.message.starts_with(message) && err.line == 1 && err.column > 1,
            "{}: {err:?}",
            String::from_utf8_lossy(body)
        );
    }
}

/// Any JSON value, nested a few levels, strings with escapes and non-ASCII included.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC*".prop_map(Value::String),
        "[\"\\\\/\u{0}-\u{1f}a-z]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_json_is_skipped_whole(value in any_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let mut scanner = Scanner::new(text.as_bytes());
        prop_assert_eq!(scanner.skip_value().unwrap(), text.as_bytes());
        prop_assert!(scanner.finish().is_ok());
    }

    #[test]
    fn servers_with_any_other_members_read_as_serde_reads_them(
        extra in prop::collection::btree_map("[a-z:_-]{1,12}", any_value(), 0..8),
        name in "\\PC{0,12}",
        launched in prop::option::of("[0-9T:.-]{0,26}"),
    ) {
        let mut extra: serde_json::Map<String, Value> = extra.into_iter().collect();
        for known in ["id", "status", "tenant_id", "created", "flavor"] {
            extra.remove(known);
        }
        extra.insert("name".into(), Value::String(name));
        extra.insert("OS-SRV-USG:launched_at".into(), launched.map_or(Value::Null, Value::String));
        same_as_serde(&[server(Value::Object(extra))]);
    }

    #[test]
    fn mangled_pages_never_panic_and_agree_with_serde_when_both_read_them(
        cut in 0usize..2000,
        byte in any::<u8>(),
    ) {
        let mut body = page(&[server(json!({})), server(json!({"name": "b"}))]);
        let at = cut % body.len();
        body[at] = byte;
        let scanned = read_nova_page::<Server>(&body);
        #[derive(serde::Deserialize)]
        struct Page { servers: Vec<Server> }
        if let (Ok(scanned), Ok(read)) = (&scanned, serde_json::from_slice::<Page>(&body)) {
            prop_assert_eq!(scanned.items.len(), read.servers.len());
            for (a, b) in scanned.items.iter().zip(&read.servers) {
                prop_assert_eq!((a.id(), a.name(), a.created()), (b.id(), b.name(), b.created()));
            }
        }
    }
}
