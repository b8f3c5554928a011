//! What the central keeps of each site's calls (`repository::contacts`): the last contact, the
//! reported spool depth and held records, the records received; kept across a reopen, a call
//! that does not report a figure keeps the stored one, and a new held list replaces the old.

use accelfed_accounting::repository::Repository;
use accelfed_accounting::repository::contacts::{Contact, HeldEntry, HeldReport};
use chrono::{DateTime, TimeZone, Utc};

use crate::Fixture;

fn at(hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, hour, 0, 0).unwrap()
}

fn entry(id: &str, reason: &str, hour: u32) -> HeldEntry {
    HeldEntry {
        record_id: id.to_owned(),
        reason: reason.to_owned(),
        since: at(hour),
    }
}

pub async fn site_contacts_are_kept_and_held_lists_replaced(fixture: &Fixture) {
    let repo = &fixture.repo;
    assert!(repo.site_contacts().await.unwrap().is_empty());
    let held = HeldReport {
        total: 3,
        records: vec![
            entry("r-b", "over capacity", 2),
            entry("r-a", "over capacity", 1),
        ],
    };
    repo.record_contact(
        "SITE-A",
        at(5),
        Contact {
            spool_depth: Some(7),
            received: 10,
            held: Some(held),
        },
    )
    .await
    .unwrap();
    // An earlier time (an instance with a slow clock) does not move the contact back; a call
    // without a depth or a held list keeps the stored ones.
    let batch = Contact {
        received: 4,
        ..Contact::default()
    };
    repo.record_contact("SITE-A", at(4), batch.clone())
        .await
        .unwrap();
    repo.record_contact("SITE-B", at(6), batch).await.unwrap();

    let contacts = repo.site_contacts().await.unwrap();
    assert_eq!(contacts.len(), 2, "{contacts:?}");
    assert_eq!(contacts[0].site, "SITE-A");
    assert_eq!(contacts[0].last_contact, at(5));
    assert_eq!(contacts[0].spool_depth, Some(7));
    assert_eq!(contacts[0].records_received, 14);
    assert_eq!(contacts[0].held_count, Some(3));
    assert_eq!(contacts[1].site, "SITE-B");
    assert_eq!(contacts[1].spool_depth, None);
    assert_eq!(contacts[1].records_received, 4);
    assert_eq!(contacts[1].held_count, None);
    let held = repo.held_records().await.unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].total, 3);
    let ids: Vec<&str> = held[0]
        .records
        .iter()
        .map(|r| r.record_id.as_str())
        .collect();
    assert_eq!(ids, ["r-a", "r-b"], "oldest first");

    // The next report replaces the list: r-a released, r-b doubted for another reason, r-c new.
    repo.record_contact(
        "SITE-A",
        at(8),
        Contact {
            spool_depth: Some(0),
            received: 0,
            held: Some(HeldReport {
                total: 2,
                records: vec![entry("r-b", "still over", 2), entry("r-c", "new", 7)],
            }),
        },
    )
    .await
    .unwrap();
    let reopened = Repository::open(&fixture.location).await.unwrap();
    let held = reopened.held_records().await.unwrap();
    assert_eq!(held[0].total, 2);
    assert_eq!(
        held[0].records,
        vec![entry("r-b", "still over", 2), entry("r-c", "new", 7)]
    );
    let contacts = reopened.site_contacts().await.unwrap();
    assert_eq!(contacts[0].last_contact, at(8));
    assert_eq!(contacts[0].spool_depth, Some(0));

    // None held any more: the site drops out of the list.
    reopened
        .record_contact(
            "SITE-A",
            at(9),
            Contact {
                spool_depth: Some(0),
                received: 0,
                held: Some(HeldReport::default()),
            },
        )
        .await
        .unwrap();
    assert!(reopened.held_records().await.unwrap().is_empty());
}
