//! Issue #28, property test: whatever sharing layout a site runs (whole GPUs, MIG profiles,
//! time-slicing and MPS replicas, vGPU types, SR-IOV virtual functions), one document states one
//! physical count at every level, its typed physical attributes are whole in every rendering, the
//! parts of a manager's total add up to it as written (largest-remainder rounding), and
//! usage records for a full month of the slots it says are in use never exceed its capacity
//! (physical GPUs x hours).
//!
//! An SR-IOV virtual function (AMD MxGPU, NVIDIA's SR-IOV vGPUs) is published as a vGPU of
//! `per_gpu` functions per card: `Sharing` has no separate mode for it, and its physical worth is
//! the same 1 / functions.

// Test helpers: an unwrap says "cannot fail here", as in the #[test] functions.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use accelfed_schemas::glue::physical;
use accelfed_schemas::glue::{
    AcceleratorCapacity, AcceleratorEnvironment, CloudShare, ComputingShare, ExecutionEnvironment,
    InstanceType, SITE_TOTAL_PREFIX, Service, SiteSnapshot, VirtualAccelerator, from_json, sample,
};
use accelfed_schemas::gpu::mig_sharing;
use accelfed_schemas::gpu::{Capacity, GpuCount, GpuModel, GpuSpec, Sharing, Virtualization};
use accelfed_schemas::names::{LocalId, Text};
use accelfed_schemas::render::{Format, json, render};
use accelfed_schemas::usage::{Month, sample as usage_sample};
use proptest::prelude::*;

mod written;

use written::{typed_physical_counts_are_whole, written_parts_add_up};

const MODELS: [&str; 2] = ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"];
/// MIG profiles of both models and their compute slices of 7.
const PROFILES: [(&str, u32); 5] = [
    ("1g.10gb", 1),
    ("2g.20gb", 2),
    ("3g.40gb", 3),
    ("4g.40gb", 4),
    ("7g.80gb", 7),
];

/// How the cards of one group of nodes are shared.
#[derive(Debug, Clone)]
enum Layout {
    Whole,
    /// Per card, the profiles it is split into (their slices add up to at most 7).
    Mig(Vec<usize>),
    TimeSlicing(u32),
    Mps(u32),
    Vgpu(u32),
    SrIov(u32),
}

/// One group of identical nodes.
#[derive(Debug, Clone)]
struct Group {
    model: usize,
    layout: Layout,
    cards: u32,
    nodes: u32,
    /// Of each accelerator's slots, the share in use, in percent.
    used_percent: u32,
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Whole),
        prop::collection::vec(0..PROFILES.len(), 1..5).prop_map(|wanted| {
            // Profiles in the order drawn, while they fit the card's 7 slices.
            let mut used = 0;
            let fitting: Vec<usize> = wanted
                .into_iter()
                .filter(|&p| {
                    let fits = used + PROFILES[p].1 <= 7;
                    if fits {
                        used += PROFILES[p].1;
                    }
                    fits
                })
                .collect();
            Layout::Mig(fitting)
        }),
        (2u32..9).prop_map(Layout::TimeSlicing),
        (2u32..9).prop_map(Layout::Mps),
        prop::sample::select(vec![2u32, 4, 8, 16]).prop_map(Layout::Vgpu),
        prop::sample::select(vec![2u32, 4, 8]).prop_map(Layout::SrIov),
    ]
}

fn group() -> impl Strategy<Value = Group> {
    (0..MODELS.len(), layout(), 1u32..9, 1u32..5, 0u32..101).prop_map(
        |(model, layout, cards, nodes, used_percent)| Group {
            model,
            layout,
            cards,
            nodes,
            used_percent,
        },
    )
}

/// What one group's cards are as accelerator kinds: (spec, slots per card) each.
fn kinds(group: &Group) -> Vec<(GpuSpec, u32)> {
    let model = MODELS[group.model];
    let mut spec = GpuSpec::new(Text::literal("NVIDIA"), GpuModel::literal(model));
    let simple = |spec: &mut GpuSpec, virtualization, sharing| {
        spec.virtualization = virtualization;
        spec.sharing = sharing;
    };
    let vgpu = |name: &str, per_gpu| Sharing::Vgpu {
        vgpu_type: Text::new(name).unwrap(),
        per_gpu,
    };
    match &group.layout {
        Layout::Whole => vec![(spec, 1)],
        Layout::TimeSlicing(replicas) => {
            let sharing = Sharing::TimeSlicing {
                replicas: *replicas,
            };
            simple(&mut spec, Virtualization::TimeSlicing, sharing);
            vec![(spec, *replicas)]
        }
        Layout::Mps(replicas) => {
            let sharing = Sharing::Mps {
                replicas: *replicas,
            };
            simple(&mut spec, Virtualization::Mps, sharing);
            vec![(spec, *replicas)]
        }
        Layout::Vgpu(per_gpu) => {
            simple(
                &mut spec,
                Virtualization::Vgpu,
                vgpu("GRID H100-10C", *per_gpu),
            );
            vec![(spec, *per_gpu)]
        }
        Layout::SrIov(functions) => {
            simple(
                &mut spec,
                Virtualization::Vgpu,
                vgpu("SR-IOV VF", *functions),
            );
            vec![(spec, *functions)]
        }
        Layout::Mig(profiles) => {
            let mut per_card: BTreeMap<usize, u32> = BTreeMap::new();
            for &profile in profiles {
                *per_card.entry(profile).or_default() += 1;
            }
            per_card
                .into_iter()
                .map(|(profile, count)| {
                    let name = PROFILES[profile].0;
                    let mut spec = spec.clone();
                    spec.virtualization = Virtualization::Mig;
                    spec.mig_profile = Text::new(name).ok();
                    spec.sharing = mig_sharing(model, name).0;
                    (spec, count)
                })
                .collect()
        }
    }
}

fn capacity(total: u32, used_percent: u32) -> Capacity {
    let used = total * used_percent / 100;
    Capacity::from_usage(
        GpuCount::whole(total),
        GpuCount::whole(used),
        GpuCount::ZERO,
    )
    .unwrap()
}

fn id(text: String) -> LocalId {
    LocalId::new(text).unwrap()
}

/// The sample site with its batch system and cloud replaced by `batch` and `cloud` groups.
fn site(batch: &[Group], cloud: &[Group]) -> SiteSnapshot {
    let mut snapshot = sample::snapshot("PROP-SITE");
    let Service::Computing(computing) = &mut snapshot.services[0] else {
        panic!("the sample's batch system comes first");
    };
    let template = computing.manager.environments[0].clone();
    let mut environments = Vec::new();
    let mut accelerators = Vec::new();
    for (g, group) in batch.iter().enumerate() {
        let mut ee: ExecutionEnvironment = template.clone();
        ee.local_id = id(format!("nodes-{g}"));
        ee.total_instances = group.nodes;
        ee.used_instances = 0;
        ee.unavailable_instances = 0;
        ee.accelerators.clear();
        for (k, (spec, per_card)) in kinds(group).into_iter().enumerate() {
            let logical = GpuCount::whole(per_card * group.cards);
            let slots = per_card * group.cards * group.nodes;
            ee.accelerators.push(AcceleratorEnvironment {
                local_id: id(format!("k{k}")),
                physical_per_instance: accelfed_schemas::glue::physical(logical, &spec.sharing),
                logical_per_instance: logical,
                capacity: capacity(slots, group.used_percent),
                gpu: spec.clone(),
            });
            accelerators.push(AcceleratorCapacity {
                local_id: id(format!("g{g}-k{k}")),
                gpu: spec,
                capacity: capacity(slots, group.used_percent),
                max_per_job: None,
            });
        }
        environments.push(ee);
    }
    computing.manager.environments = environments;
    let share: &mut ComputingShare = &mut computing.shares[0];
    share.environments = computing
        .manager
        .environments
        .iter()
        .map(|e| e.local_id.clone())
        .collect();
    // The partition reaches every node: its view is the manager's accelerators.
    share.accelerators = accelerators
        .iter()
        .map(|a| AcceleratorCapacity {
            local_id: id(format!("gpu/{}", a.local_id)),
            ..a.clone()
        })
        .collect();
    computing.manager.accelerators = accelerators;

    let Service::Cloud(cloud_service) = &mut snapshot.services[1] else {
        panic!("the sample's cloud comes second");
    };
    let mut accelerators = Vec::new();
    let mut flavors = Vec::new();
    let template_flavor: InstanceType = cloud_service.instance_types[0].clone();
    for (g, group) in cloud.iter().enumerate() {
        for (k, (spec, per_card)) in kinds(group).into_iter().enumerate() {
            let slots = per_card * group.cards * group.nodes;
            accelerators.push(AcceleratorCapacity {
                local_id: id(format!("c{g}-k{k}")),
                gpu: spec.clone(),
                capacity: capacity(slots, group.used_percent),
                max_per_job: None,
            });
            let mut flavor = template_flavor.clone();
            flavor.local_id = id(format!("f{g}-k{k}"));
            flavor.name = Text::new(format!("f{g}-k{k}")).unwrap();
            flavor.accelerator = Some(VirtualAccelerator {
                gpu: spec,
                count: GpuCount::whole(1 + group.cards % per_card.max(1)),
            });
            flavors.push(flavor);
        }
    }
    let share: &mut CloudShare = &mut cloud_service.shares[0];
    // The project sees half of each pool (rounded down): a view, never more than the whole.
    share.accelerators = accelerators
        .iter()
        .map(|a| {
            let total = a.capacity.total.get() as u32 / 2;
            AcceleratorCapacity {
                local_id: id(format!("atlas/{}", a.local_id)),
                capacity: capacity(total, 0),
                ..a.clone()
            }
        })
        .collect();
    share.max_gpus = None;
    cloud_service.manager.accelerators = accelerators;
    cloud_service.instance_types = flavors;
    snapshot
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_level_agrees_and_a_month_of_use_fits_capacity(
        batch in prop::collection::vec(group(), 1..5),
        cloud in prop::collection::vec(group(), 1..4),
    ) {
        let snapshot = site(&batch, &cloud);
        // The checker at every level, on the snapshot and on the document read back.
        prop_assert_eq!(snapshot.validate(), Ok(()));
        let document = json::document(&snapshot);
        let read = from_json::from_value(&document).unwrap();
        prop_assert_eq!(physical::check(&read.entities), Ok(()));
        prop_assert_eq!(typed_physical_counts_are_whole(&document), Ok(()));
        prop_assert_eq!(written_parts_add_up(&document), Ok(()));

        // The site's totals are the batch manager's plus the cloud's, per model, and whole
        // numbers wherever every card is fully partitioned.
        let totals = snapshot.physical_totals();
        let site_info = &document["AdminDomain"][0]["OtherInfo"];
        for (model, total) in &totals {
            let key = format!("{SITE_TOTAL_PREFIX}{model}");
            let written = total.to_string();
            prop_assert_eq!(site_info[&key].as_str(), Some(written.as_str()));
        }

        // LDIF (GLUE 2.1) writes physical counts as integers, fractions only in OtherInfo.
        let ldif = String::from_utf8(render(&snapshot, Format::LdifGlue21)).unwrap();
        for line in ldif.lines().filter(|l| l.contains("PhysicalAccelerators: ")) {
            let value = line.rsplit(": ").next().unwrap_or_default();
            prop_assert!(value.parse::<u64>().is_ok(), "{}", line);
        }

        // A full month of every slot the document says is in use, one record per slot held,
        // counted as meters count (`Sharing::physical_share` per unit).
        let month = Month::new(2026, 1).unwrap();
        let hours = month.seconds() as f64 / 3600.0;
        let mut used_hours: BTreeMap<&str, f64> = BTreeMap::new();
        for service in &snapshot.services {
            let accelerators = match service {
                Service::Computing(s) => &s.manager.accelerators,
                Service::Cloud(s) => &s.manager.accelerators,
            };
            for accelerator in accelerators {
                let used = accelerator.capacity.used.get() as u32;
                for slot in 0..used {
                    let mut record = usage_sample::record(&format!("{}-{slot}", accelerator.local_id));
                    record.month = month;
                    record.first_seen = month.start();
                    record.last_seen = month.end() - chrono::Duration::seconds(1);
                    record.available_duration = month.seconds();
                    record.active_duration = None;
                    record.model = accelerator.gpu.model.clone();
                    record.sharing = accelerator.gpu.sharing.clone();
                    record.count = GpuCount::new(accelerator.gpu.sharing.physical_share()).unwrap();
                    let shape = record.validate_shape();
                    prop_assert!(shape.is_ok(), "{:?}", shape);
                    *used_hours.entry(accelerator.gpu.model.as_str()).or_default() +=
                        record.gpu_hours();
                }
            }
        }
        for (model, gpu_hours) in used_hours {
            let capacity = totals.get(model).map_or(0.0, |t| t.get()) * hours;
            prop_assert!(
                gpu_hours <= capacity + 1e-6,
                "{model}: {gpu_hours} GPU-hours used, {capacity} exist"
            );
        }
    }
}
