//! Quota-aware answers for one VO (issue #31, item 4), on the index the API, the broker and the
//! page read.

use super::*;

/// A VO with 2 GPUs of quota headroom on a cloud whose pool has 8 free: its query is not offered
/// the 4- and 8-GPU flavors, and the free count it is told is 2; another query still sees 8.
#[test]
fn a_vo_is_offered_what_its_quota_leaves_it() {
    use accelfed_schemas::gpu::Capacity;
    let mut snapshot = many_flavors("QUOTA");
    for service in &mut snapshot.services {
        if let Service::Cloud(cloud) = service {
            let whole = |n| GpuCount::whole(n);
            cloud.manager.accelerators[0].capacity =
                Capacity::from_usage(whole(8), whole(0), whole(0)).unwrap();
            // The site's share figure: min(8 free, quota 4 - 2 used) = 2.
            cloud.shares[0].accelerators[0].capacity =
                Capacity::from_usage(whole(4), whole(2), whole(0)).unwrap();
            // Only the A100 flavors, of the very GPU the manager and the share publish.
            let gpu = cloud.manager.accelerators[0].gpu.clone();
            cloud.instance_types.retain(|flavor| {
                flavor
                    .accelerator
                    .as_ref()
                    .is_some_and(|a| a.gpu.model.as_str().contains("A100"))
            });
            for flavor in &mut cloud.instance_types {
                if let Some(accelerator) = &mut flavor.accelerator {
                    accelerator.gpu = gpu.clone();
                }
            }
        }
    }
    let received = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    let index = Index::default().with(view("QUOTA", &snapshot, received));
    let now = received;
    let cloud = |vo: Option<&str>| Filter {
        vo: vo.map(str::to_owned),
        ..Filter::default()
    };
    let seen = |filter: &Filter| -> Vec<(f64, Option<f64>)> {
        index
            .offers(filter, now)
            .into_iter()
            .filter(|offer| offer.service_kind == ServiceKind::Cloud)
            .map(|offer| {
                (
                    offer.gpus_each.get(),
                    offer.free_physical.map(GpuCount::get),
                )
            })
            .collect()
    };
    let everyone = seen(&cloud(None));
    assert!(
        everyone.iter().any(|(gpus, _)| *gpus == 8.0),
        "{everyone:?}"
    );
    assert!(
        everyone.iter().all(|(_, free)| *free == Some(8.0)),
        "{everyone:?}"
    );
    let atlas = seen(&cloud(Some("atlas")));
    assert!(!atlas.is_empty());
    assert!(
        atlas
            .iter()
            .all(|(gpus, free)| *gpus <= 2.0 && *free == Some(2.0)),
        "{atlas:?}"
    );
    // The JSON answer tells the VO the same.
    let hits = index.select(&cloud(Some("ATLAS")), now);
    let answer: serde_json::Value = serde_json::from_slice(&answer(now, &hits)).unwrap();
    let offers = answer["offers"].as_array().unwrap();
    let cloud_offers: Vec<&serde_json::Value> = offers
        .iter()
        .filter(|o| o["service_kind"] == "cloud")
        .collect();
    assert_eq!(cloud_offers.len(), atlas.len());
    assert!(
        cloud_offers
            .iter()
            .all(|o| o["free_physical"] == 2.0 && o["free"] == 2.0)
    );
    // The broker picks no 4-GPU flavor for the VO.
    let request = BrokerRequest {
        num_gpus: 4.0,
        gpu_vendor: None,
        gpu_model: None,
        vo: Some("atlas".into()),
        fresh: false,
    };
    assert!(index.broker(&request, now).is_empty());
}
