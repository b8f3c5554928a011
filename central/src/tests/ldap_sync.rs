//! The registry's LDAP side against a real slapd with the official GLUE 2.0 schema: the federation
//! view loads, a second sync sends nothing, and after one site changes only the changed entries are
//! written (counted by the sync and checked against the server's own `entryCSN` stamps); `query
//! --ldap` answers like the registry and cannot be made to inject filter terms. Inside the crate
//! because the sync is crate-private; `cli/tests/registry_ldap.rs` runs the sync through the whole
//! service. A failing call here is the test failing; its error (slapd's log included) is the
//! message.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::registry::ldap::LdapSync;
use crate::registry::ldap::config::{DEFAULT_BASE, GroupBase, LdapSyncConfig, LdapUrl, ModeName};
use crate::registry::ldap::plan::PlanCounts;
use crate::registry::ldap::query::query;
use accelfed_schemas::glue::SiteSnapshot;
use accelfed_schemas::glue::from_json::{ParsedDocument, parse};
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::Text;
use accelfed_schemas::offer::{Filter, Offer, offers};
use accelfed_schemas::render::json;
use accelfed_testkit::slapd::{ROOT_DN, ROOT_PW, Slapd};

const BASE: &str = "GLUE2GroupID=grid,o=glue";

/// The document the registry would hold for `snapshot`: rendered as sites push it, parsed back.
fn pushed(snapshot: &SiteSnapshot) -> ParsedDocument {
    parse(&json::render(snapshot)).unwrap()
}

fn sync_for(slapd: &Slapd, dir: &Path) -> LdapSync {
    std::fs::write(dir.join("ldap.password"), format!("{ROOT_PW}\n")).unwrap();
    LdapSync::new(&config(slapd, "ldap.password"), |path| dir.join(path)).unwrap()
}

/// `[ldap]` for `slapd`, bound as its rootdn, defaults elsewhere.
fn config(slapd: &Slapd, password_file: &str) -> LdapSyncConfig {
    LdapSyncConfig {
        url: LdapUrl::try_from(slapd.url().to_owned()).unwrap(),
        bind_dn: ROOT_DN.to_owned(),
        password_file: password_file.into(),
        base: GroupBase::try_from(DEFAULT_BASE.to_owned()).unwrap(),
        mode: ModeName::default(),
        interval_s: 0,
        ca: None,
    }
}

/// Every entry under the base with its `entryCSN` (slapd stamps each write with a new one).
fn csns(slapd: &Slapd) -> BTreeMap<String, String> {
    slapd
        .search(BASE, "(objectClass=*)", &["entryCSN"])
        .unwrap()
        .into_iter()
        .map(|entry| {
            let csn = entry.first("entryCSN").unwrap_or_default().to_owned();
            (entry.dn, csn)
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_federation_view_loads_and_a_change_writes_only_the_changed_entries() {
    let slapd = Slapd::start(&[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sync = sync_for(&slapd, dir.path());
    let rt = runtime();
    let site_a = pushed(&snapshot("SITE-A"));
    let mut b = snapshot("SITE-B");
    let site_b = pushed(&b);

    // First sync: everything is added, nothing refused.
    let report = rt
        .block_on(sync.sync(&[site_a.clone(), site_b.clone()]))
        .unwrap();
    assert!(
        report.applied.failed.is_empty(),
        "{:?}",
        report.applied.failed
    );
    assert_eq!(report.planned.adds, report.entries);
    assert_eq!(report.planned.total(), report.entries);
    assert_eq!(report.applied.done, report.planned);
    let before = csns(&slapd);
    assert_eq!(before.len(), report.entries, "{:?}", before.keys());
    // The view is what a top-BDII holds: both sites' domains under the grid group, their services
    // beneath, GPU facts findable.
    let domains = slapd
        .search(BASE, "(objectClass=GLUE2AdminDomain)", &["GLUE2DomainID"])
        .unwrap();
    let mut names: Vec<&str> = domains
        .iter()
        .filter_map(|d| d.first("GLUE2DomainID"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["SITE-A", "SITE-B"]);
    let a100 = slapd
        .search(
            "GLUE2GroupID=resource,GLUE2DomainID=SITE-B,GLUE2GroupID=grid,o=glue",
            "(&(objectClass=GLUE2ExecutionEnvironment)(GLUE2EntityOtherInfo=GPU.*.Model=*A100*))",
            &["GLUE2ResourceID"],
        )
        .unwrap();
    assert_eq!(a100.len(), 3, "{a100:?}");

    // The same view again: nothing to send.
    let again = rt.block_on(sync.sync(&[site_a.clone(), site_b])).unwrap();
    assert_eq!(again.planned, PlanCounts::default());
    assert_eq!(csns(&slapd), before);

    // Site B changes its description: one entry, one attribute.
    b.domain.description = Some(Text::new("now with more GPUs").unwrap());
    let changed = rt
        .block_on(sync.sync(&[site_a.clone(), pushed(&b)]))
        .unwrap();
    assert_eq!(
        changed.planned,
        PlanCounts {
            adds: 0,
            modifies: 1,
            deletes: 0,
            changed_attributes: 1
        }
    );
    assert_eq!(changed.applied.done, changed.planned);
    let after = csns(&slapd);
    let rewritten: Vec<&String> = after
        .iter()
        .filter(|(dn, csn)| before.get(*dn) != Some(csn))
        .map(|(dn, _)| dn)
        .collect();
    assert_eq!(
        rewritten,
        ["GLUE2DomainID=SITE-B,GLUE2GroupID=grid,o=glue"],
        "the server saw writes elsewhere"
    );
    let domain = slapd
        .search(
            "GLUE2DomainID=SITE-B,GLUE2GroupID=grid,o=glue",
            "(objectClass=GLUE2AdminDomain)",
            &["GLUE2DomainDescription"],
        )
        .unwrap();
    assert_eq!(
        domain[0].first("GLUE2DomainDescription"),
        Some("now with more GPUs")
    );

    // Site B leaves: its whole subtree goes, children first, and site A is not touched.
    let site_b_entries = after
        .keys()
        .filter(|dn| dn.ends_with("GLUE2DomainID=SITE-B,GLUE2GroupID=grid,o=glue"))
        .count();
    let gone = rt.block_on(sync.sync(&[site_a])).unwrap();
    assert!(gone.applied.failed.is_empty(), "{:?}", gone.applied.failed);
    assert_eq!(
        gone.planned,
        PlanCounts {
            adds: 0,
            modifies: 0,
            deletes: site_b_entries,
            changed_attributes: 0
        }
    );
    let last = csns(&slapd);
    assert_eq!(last.len(), after.len() - site_b_entries);
    assert!(last.iter().all(|(dn, csn)| after.get(dn) == Some(csn)));
}

#[test]
fn a_hand_edited_entry_is_repaired_and_a_stray_entry_removed() {
    let slapd = Slapd::start(&[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sync = sync_for(&slapd, dir.path());
    let rt = runtime();
    let site = pushed(&snapshot("SITE-A"));
    rt.block_on(sync.sync(std::slice::from_ref(&site))).unwrap();

    let report = slapd
        .load_ldif(
            b"dn: GLUE2GroupID=stray,GLUE2GroupID=grid,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: stray\n",
        )
        .unwrap();
    assert_eq!(report.loaded, 1, "{report}");
    let edit = Command::new("/usr/bin/ldapmodify")
        .args(["-x", "-H", slapd.url(), "-D", ROOT_DN, "-w", ROOT_PW])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut edit = edit;
    edit.stdin
        .take()
        .unwrap()
        .write_all(
            b"dn: GLUE2DomainID=SITE-A,GLUE2GroupID=grid,o=glue\nchangetype: modify\n\
              replace: GLUE2EntityName\nGLUE2EntityName: edited by hand\n",
        )
        .unwrap();
    let output = edit.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");

    let repaired = rt.block_on(sync.sync(&[site])).unwrap();
    assert_eq!(
        repaired.planned,
        PlanCounts {
            adds: 0,
            modifies: 1,
            deletes: 1,
            changed_attributes: 1
        }
    );
    assert!(repaired.applied.failed.is_empty());
    let domain = slapd
        .search(
            "GLUE2DomainID=SITE-A,GLUE2GroupID=grid,o=glue",
            "(objectClass=GLUE2AdminDomain)",
            &["GLUE2EntityName"],
        )
        .unwrap();
    assert_eq!(domain[0].first("GLUE2EntityName"), Some("SITE-A"));
}

#[test]
fn a_wrong_password_is_an_error_that_names_the_server_and_the_bind_dn() {
    let slapd = Slapd::start(&[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pw"), "wrong\n").unwrap();
    let sync = LdapSync::new(&config(&slapd, "pw"), |path| dir.path().join(path)).unwrap();
    let err = runtime()
        .block_on(sync.sync(&[pushed(&snapshot("SITE-A"))]))
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains(slapd.url()), "{text}");
    assert!(text.contains(ROOT_DN), "{text}");
    assert!(!text.contains("wrong"), "the password leaked: {text}");
}

/// The view of two sites loaded into a fresh slapd by the sync, and the documents behind it.
fn loaded_federation() -> (Slapd, Vec<ParsedDocument>) {
    let slapd = Slapd::start(&[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sync = sync_for(&slapd, dir.path());
    let documents = vec![pushed(&snapshot("SITE-A")), pushed(&snapshot("SITE-B"))];
    let report = runtime().block_on(sync.sync(&documents)).unwrap();
    assert!(
        report.applied.failed.is_empty(),
        "{:?}",
        report.applied.failed
    );
    (slapd, documents)
}

/// (site, resource, GPUs each, model, VOs) of each offer, sorted: what both answers must agree on.
fn summary(offers: &[Offer]) -> Vec<(String, String, String, String, Vec<String>)> {
    let mut out: Vec<_> = offers
        .iter()
        .map(|o| {
            let mut vos = o.vos.clone();
            vos.sort();
            (
                o.site.clone(),
                o.resource_id.clone(),
                o.gpus_each.to_string(),
                o.model.clone(),
                vos,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn query_ldap_answers_like_the_registry_for_the_same_filter() {
    let (slapd, documents) = loaded_federation();
    let rt = runtime();
    for filter in [
        Filter {
            model: Some("A100".into()),
            ..Filter::default()
        },
        Filter {
            model: Some("a100".into()),
            min_gpus: Some(GpuCount::whole(4)),
            vo: Some("atlas".into()),
            ..Filter::default()
        },
        Filter {
            vendor: Some("nvidia".into()),
            site: Some("SITE-B".into()),
            ..Filter::default()
        },
    ] {
        let from_ldap = rt
            .block_on(query(
                slapd.url(),
                "o=glue",
                &filter,
                &accelfed_net::Trust::system(),
            ))
            .unwrap();
        let expected: Vec<Offer> = documents
            .iter()
            .flat_map(|doc| offers(&doc.entities, &doc.stamps))
            .filter(|offer| filter.matches(offer))
            .collect();
        assert!(!expected.is_empty(), "{filter:?} selects something");
        assert_eq!(summary(&from_ldap), summary(&expected), "{filter:?}");
    }
}

#[test]
fn query_parameters_cannot_inject_ldap_filter_terms() {
    let (slapd, _) = loaded_federation();
    let rt = runtime();
    let everything = rt
        .block_on(query(
            slapd.url(),
            "o=glue",
            &Filter::default(),
            &accelfed_net::Trust::system(),
        ))
        .unwrap();
    assert!(!everything.is_empty());
    for attempt in [
        Filter {
            model: Some("A100*)(objectClass=*".into()),
            ..Filter::default()
        },
        Filter {
            model: Some("*".into()),
            ..Filter::default()
        },
        Filter {
            vendor: Some("x)(|(objectClass=*".into()),
            ..Filter::default()
        },
        Filter {
            vo: Some("atlas)(GLUE2PolicyRule=*".into()),
            ..Filter::default()
        },
        Filter {
            vo: Some("*".into()),
            ..Filter::default()
        },
        Filter {
            model: Some("A100\\29\u{0}(".into()),
            ..Filter::default()
        },
    ] {
        // The server takes every filter (no syntax error from a stray parenthesis) and nothing
        // matches a value nobody published.
        let found = rt
            .block_on(query(
                slapd.url(),
                "o=glue",
                &attempt,
                &accelfed_net::Trust::system(),
            ))
            .unwrap_or_else(|err| panic!("{attempt:?}: {err}"));
        assert!(found.is_empty(), "{attempt:?} matched {found:?}");
    }
}

#[test]
fn query_ldap_names_the_server_it_cannot_reach() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ldap://127.0.0.1:{}", listener.local_addr().unwrap().port());
    drop(listener);
    let err = runtime()
        .block_on(query(
            &url,
            "o=glue",
            &Filter::default(),
            &accelfed_net::Trust::system(),
        ))
        .unwrap_err();
    assert!(err.to_string().contains(&url), "{err}");
}
