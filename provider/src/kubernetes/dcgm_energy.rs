//! A GPU's energy shared out among the pods that held it, by held time. Pure.
//!
//! DCGM's energy counter belongs to the whole GPU. The exporter labels a GPU's series with the pod
//! that holds it, so `increase(counter[range])` of one series is the GPU's energy while that pod
//! held it. Where several pods hold one GPU at once (MIG instances, time-slicing replicas) each of
//! their series carries the same GPU's energy; counting every series would count the GPU several
//! times. So each series' energy is spread evenly over its pod's hold (an assumption of constant
//! power within one hold: the counter is read once per series), the GPU's time is cut where a hold
//! starts or ends, and each stretch's energy is divided equally among the pods holding the GPU in
//! it. A pod alone on its GPU gets its series' energy whole; a GPU's energy while nobody held it
//! belongs to no pod.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::dcgm::{Energy, Series};

/// (namespace, pod) -> the part of its hold the energy query covered, `[start, end)`.
pub type Holds = BTreeMap<(String, String), (DateTime<Utc>, DateTime<Utc>)>;

/// A pod on one GPU: its series' watt-hours and its hold.
type Held<'a> = (&'a (String, String), f64, DateTime<Utc>, DateTime<Utc>);

/// Watt-hours per pod from the energy series of one answer (see the module documentation). Series
/// of pods without a hold (not in the inventory) are left out.
pub fn share(series: &[Series], holds: &Holds) -> Energy {
    // GPU -> pod -> energy of its series; a pod's MIG instances read one GPU's counter, so the
    // largest of its series on one GPU is that GPU's energy during the hold.
    let mut gpus: BTreeMap<&str, BTreeMap<(String, String), f64>> = BTreeMap::new();
    for s in series {
        let pod = (s.namespace.clone(), s.pod.clone());
        if !holds.contains_key(&pod) {
            continue;
        }
        let energy = gpus.entry(&s.device).or_default().entry(pod).or_default();
        *energy = energy.max(s.value);
    }
    let mut out = Energy::new();
    for pods in gpus.values() {
        let held: Vec<Held> = pods
            .iter()
            .filter_map(|(pod, wh)| {
                let (start, end) = *holds.get(pod)?;
                (end > start).then_some((pod, *wh, start, end))
            })
            .collect();
        let mut cuts: Vec<DateTime<Utc>> = held.iter().flat_map(|h| [h.2, h.3]).collect();
        cuts.sort();
        cuts.dedup();
        for stretch in cuts.windows(2) {
            let (from, to) = (stretch[0], stretch[1]);
            let holders: Vec<_> = held.iter().filter(|h| h.2 <= from && h.3 >= to).collect();
            let seconds = seconds(from, to);
            for (pod, wh, start, end) in &holders {
                let rate = wh / seconds_of(*start, *end);
                *out.entry((*pod).clone()).or_default() += rate * seconds / holders.len() as f64;
            }
        }
    }
    out
}

fn seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / 1000.0
}

fn seconds_of(start: DateTime<Utc>, end: DateTime<Utc>) -> f64 {
    seconds(start, end).max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 5, 1, hour, 0, 0).unwrap()
    }

    fn series(pod: &str, device: &str, wh: f64) -> Series {
        Series {
            namespace: "ns".into(),
            pod: pod.into(),
            device: device.into(),
            instance: None,
            value: wh,
        }
    }

    fn key(pod: &str) -> (String, String) {
        ("ns".to_owned(), pod.to_owned())
    }

    #[test]
    fn a_pod_alone_gets_its_gpus_energy_and_sharers_split_their_common_time() {
        let holds: Holds = [
            (key("alone"), (at(10), at(14))),
            // a holds GPU-s 10-14, b 12-14: 10-12 is a's alone, 12-14 split in two.
            (key("a"), (at(10), at(14))),
            (key("b"), (at(12), at(14))),
        ]
        .into_iter()
        .collect();
        let energy = share(
            &[
                series("alone", "GPU-1", 1000.0),
                series("alone", "GPU-2", 500.0),
                // 400 W for 4 h, as each series of GPU-s reads it: 1600 Wh over a's hold, 800 Wh
                // over b's.
                series("a", "GPU-s", 1600.0),
                series("b", "GPU-s", 800.0),
                series("unknown", "GPU-s", 99.0),
            ],
            &holds,
        );
        assert_eq!(energy[&key("alone")], 1500.0);
        assert!(
            (energy[&key("a")] - (800.0 + 400.0)).abs() < 1e-9,
            "{energy:?}"
        );
        assert!((energy[&key("b")] - 400.0).abs() < 1e-9, "{energy:?}");
        // The GPU's 1600 Wh, counted once.
        assert!((energy[&key("a")] + energy[&key("b")] - 1600.0).abs() < 1e-9);
        assert!(!energy.contains_key(&key("unknown")));
    }

    #[test]
    fn mig_instances_of_one_pod_read_one_counter_once() {
        let holds: Holds = [(key("mig"), (at(10), at(12)))].into_iter().collect();
        let mut one = series("mig", "GPU-m", 300.0);
        one.instance = Some("7".into());
        let mut two = one.clone();
        two.instance = Some("8".into());
        assert_eq!(share(&[one, two], &holds)[&key("mig")], 300.0);
    }
}
