use super::*;

fn at(minute: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap()
}

fn sample(minute: i64, valid_minutes: i64, model: &str, free: u32, total: u32) -> Sample {
    Sample {
        received_at: at(minute),
        expires: at(minute + valid_minutes),
        models: [(
            model.to_owned(),
            (GpuCount::whole(free), GpuCount::whole(total)),
        )]
        .into(),
    }
}

#[test]
fn each_instant_adds_every_sites_latest_sample_and_keeps_stale_sites_apart() {
    let mut history = CapacityHistory::new(10);
    history.record("A", sample(0, 60, "L40S", 15, 40));
    history.record("B", sample(10, 15, "L40S", 2, 8));
    history.record("A", sample(20, 60, "L40S", 5, 40));
    // Heard again (another instance's announcement of the same push): not added twice.
    history.record("A", sample(20, 60, "L40S", 5, 40));
    let over = history.over_time(None, at(30));
    // A arrives, B arrives, A again, B goes stale at 25, now.
    assert_eq!(over.instants, [at(0), at(10), at(20), at(25), at(30)]);
    let levels: Vec<(f64, f64, f64)> = over.models["L40S"]
        .iter()
        .map(|l| (l.free.get(), l.total.get(), l.stale_total.get()))
        .collect();
    assert_eq!(
        levels,
        [
            (15.0, 40.0, 0.0),
            (17.0, 48.0, 0.0),
            (7.0, 48.0, 0.0),
            (5.0, 40.0, 8.0),
            (5.0, 40.0, 8.0)
        ]
    );
    assert_eq!(over.models["L40S"][2].used(), GpuCount::whole(41));
    let site_b = history.over_time(Some("B"), at(30));
    assert_eq!(site_b.instants, [at(10), at(25), at(30)]);
    assert!(history.over_time(Some("C"), at(30)).instants.is_empty());
}

#[test]
fn many_pushes_are_drawn_at_evenly_spaced_instants_and_the_oldest_are_dropped() {
    let mut history = CapacityHistory::new(500);
    for minute in 0..400 {
        history.record("A", sample(minute, 1_000, "H100", 1, 8));
    }
    let over = history.over_time(None, at(400));
    assert_eq!(over.instants.len(), MAX_POINTS);
    assert_eq!(
        (over.instants[0], over.instants[MAX_POINTS - 1]),
        (at(0), at(400))
    );
    let mut short = CapacityHistory::new(3);
    for minute in 0..5 {
        short.record("A", sample(minute, 1_000, "H100", 1, 8));
    }
    assert_eq!(short.over_time(None, at(5)).instants[0], at(2));
}

#[test]
fn a_document_that_expired_before_it_arrived_does_not_stretch_the_axis_back() {
    let mut history = CapacityHistory::new(10);
    history.record("OLD", sample(10, -60, "H100", 1, 8));
    let over = history.over_time(None, at(20));
    assert_eq!(over.instants, [at(10), at(20)]);
    assert_eq!(over.models["H100"][0].stale_total, GpuCount::whole(8));
}
