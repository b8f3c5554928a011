use std::future::poll_fn;

use super::*;

fn limits(max: usize, per_address: usize, per_network: usize, reserved: usize) -> ConnectionLimits {
    ConnectionLimits {
        max_connections: max,
        max_connections_per_address: per_address,
        max_connections_per_network: per_network,
        reserved_for_sites: reserved,
        ..ConnectionLimits::default()
    }
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// Whether the permit was told to give way (polled once, as a pending read would).
async fn evicted(permit: &Permit) -> bool {
    poll_fn(|cx| Poll::Ready(permit.poll_evicted(cx).is_ready())).await
}

#[test]
fn networks_are_slash_24_and_slash_64_and_mapped_addresses_count_as_ipv4() {
    assert_eq!(Network::of(ip("192.0.2.1")), Network::of(ip("192.0.2.254")));
    assert_ne!(Network::of(ip("192.0.2.1")), Network::of(ip("192.0.3.1")));
    assert_eq!(
        Network::of(ip("2001:db8:1:2::1")),
        Network::of(ip("2001:db8:1:2:ffff::9"))
    );
    assert_ne!(
        Network::of(ip("2001:db8:1:2::1")),
        Network::of(ip("2001:db8:1:3::1"))
    );
    assert_eq!(
        Network::of(ip("::ffff:192.0.2.7")),
        Network::of(ip("192.0.2.1"))
    );
}

#[tokio::test]
async fn an_address_at_its_cap_is_refused_and_a_place_is_freed_on_drop() {
    let gate = Gate::new(limits(3, 2, 3, 0));
    let a = ip("192.0.2.1");
    let first = gate.admit(a).unwrap().permit;
    let _second = gate.admit(a).unwrap().permit;
    assert_eq!(gate.admit(a).unwrap_err(), Refusal::AddressFull);
    drop(first);
    assert_eq!(gate.open(), 1);
    assert!(gate.admit(a).is_ok());
}

#[tokio::test]
async fn a_full_port_makes_the_heaviest_address_give_way_to_a_lighter_one_oldest_first() {
    let gate = Gate::new(limits(4, 4, 4, 0));
    let crowd = ip("192.0.2.9");
    let held: Vec<Permit> = (0..4).map(|_| gate.admit(crowd).unwrap().permit).collect();
    // The crowd cannot grow past the port or trade with itself.
    assert_eq!(gate.admit(crowd).unwrap_err(), Refusal::AddressFull);
    let site = gate.admit(ip("192.0.2.1")).unwrap();
    assert_eq!(site.displaced, Some(crowd));
    assert!(evicted(&held[0]).await, "the oldest gave way");
    for permit in &held[1..] {
        assert!(!evicted(permit).await);
    }
    assert!(!evicted(&site.permit).await);
    assert_eq!(gate.open(), 4);
    // Dropping the evicted permit does not free a second place.
    drop(held);
    assert_eq!(gate.open(), 1);
}

#[tokio::test]
async fn a_newcomer_holding_as_many_as_the_heaviest_is_refused() {
    let gate = Gate::new(limits(2, 4, 4, 0));
    let _a = gate.admit(ip("192.0.2.1")).unwrap();
    let _b = gate.admit(ip("192.0.2.2")).unwrap();
    let c = ip("192.0.2.3");
    // c holds 0, fewer than a's 1: it takes a's place.
    let _c = gate.admit(c).unwrap();
    // Now c holds 1, as many as b: nothing is fairer, so it waits its turn.
    assert_eq!(gate.admit(c).unwrap_err(), Refusal::Full);
    assert_eq!(gate.open(), 2);
}

#[tokio::test]
async fn a_balanced_crowd_does_not_trade_places_among_itself() {
    let gate = Gate::new(limits(4, 4, 8, 0));
    let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
    let _a1 = gate.admit(a).unwrap();
    let _a2 = gate.admit(a).unwrap();
    let b1 = gate.admit(b).unwrap();
    let _b2 = gate.admit(b).unwrap();
    drop(b1);
    let _b3 = gate.admit(b).unwrap();
    // b holds 2, as many as a: its next connection waits.
    assert_eq!(gate.admit(b).unwrap_err(), Refusal::Full);
    assert_eq!(gate.admit(a).unwrap_err(), Refusal::Full);
}

#[tokio::test]
async fn a_network_at_its_cap_trades_only_within_itself_and_other_networks_pass_the_crowd() {
    let gate = Gate::new(limits(8, 4, 4, 0));
    let held: Vec<Permit> = (0..4)
        .map(|_| gate.admit(ip("198.51.100.7")).unwrap().permit)
        .collect();
    // Another address of the full network: it holds fewer, so the crowd's oldest gives way.
    let neighbour = gate.admit(ip("198.51.100.8")).unwrap();
    assert_eq!(neighbour.displaced, Some(ip("198.51.100.7")));
    assert!(evicted(&held[0]).await);
    // A network holding less than the crowd's, while the port is full, takes a crowd place.
    let others: Vec<Admission> = (1..=4)
        .map(|i| gate.admit(ip(&format!("203.0.113.{i}"))).unwrap())
        .collect();
    assert!(others.iter().all(|admission| admission.displaced.is_none()));
    let late = gate.admit(ip("192.0.2.1")).unwrap();
    assert!(late.displaced.is_some());
    assert_eq!(gate.open(), 8);
}

#[tokio::test]
async fn authenticated_connections_within_the_reserve_never_give_way() {
    let gate = Gate::new(limits(2, 2, 2, 1));
    let site = gate.admit(ip("192.0.2.1")).unwrap().permit;
    site.standing().authenticated();
    let other = gate.admit(ip("192.0.2.1")).unwrap().permit;
    // 192.0.2.1 holds 2 of 2; a newcomer from elsewhere takes the unauthenticated one.
    let newcomer = gate.admit(ip("192.0.2.2")).unwrap();
    assert!(evicted(&other).await);
    assert!(!evicted(&site).await);
    // A third address takes the newcomer's place, never the site's.
    let third = gate.admit(ip("192.0.2.3")).unwrap();
    assert_eq!(third.displaced, Some(ip("192.0.2.2")));
    assert!(evicted(&newcomer.permit).await);
    assert!(!evicted(&site).await);
}

#[tokio::test]
async fn a_busy_connection_gives_way_after_the_idle_ones_of_its_address() {
    let gate = Gate::new(limits(2, 2, 2, 0));
    let busy = gate.admit(ip("192.0.2.9")).unwrap().permit;
    let _call = busy.requests().begin();
    let idle = gate.admit(ip("192.0.2.9")).unwrap().permit;
    let _newcomer = gate.admit(ip("192.0.2.1")).unwrap();
    assert!(evicted(&idle).await, "the idle one, though younger");
    assert!(!evicted(&busy).await);
}
