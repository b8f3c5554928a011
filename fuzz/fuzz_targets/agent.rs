//! The node agent's readers of outside input (first byte picks): a process's cgroup file
//! (`cgroup::holder_in`), the agent's state file (`Ledger` from JSON, as `state::load` reads it)
//! and the state document `accelfed idle` reads (`idle_list::idle_now`). A holder found is a
//! Slurm job of digits or a pod of a lower-case UUID; the idle list is sorted and above the
//! threshold; a ledger that parses counts on without a panic.
#![no_main]

use accelfed_agent::holder::Holder;
use accelfed_agent::idle::IdleRule;
use accelfed_agent::idle_list::idle_now;
use accelfed_agent::ledger::Ledger;
use accelfed_fuzz::select;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((selector, input)) = select(data) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    match selector % 3 {
        0 => match accelfed_agent::cgroup::holder_in(text) {
            Some(Holder::SlurmJob(id)) => assert!(!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()), "{id}"),
            Some(Holder::KubernetesPod(uid)) => {
                assert_eq!(uid.len(), 36, "{uid}");
                assert!(uid.bytes().all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{uid}");
            }
            Some(other) => panic!("a cgroup file named {other}"),
            None => {}
        },
        1 => {
            if let Ok(mut ledger) = serde_json::from_str::<Ledger>(text) {
                ledger.apply(&[], &IdleRule::default(), 60_000);
                ledger.prune(0);
                let _ = serde_json::to_string(&ledger).expect("a ledger serialises");
            }
        }
        _ => {
            let Ok(document) = serde_json::from_str::<serde_json::Value>(text) else {
                return;
            };
            let min_hours = f64::from(selector >> 2);
            if let Ok(idle) = idle_now(&document, min_hours) {
                assert!(idle.iter().all(|a| a.idle_hours >= min_hours));
                assert!(idle.windows(2).all(|w| w[0].idle_hours >= w[1].idle_hours), "longest idle first");
            }
        }
    }
});
