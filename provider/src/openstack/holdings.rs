//! What a cloud's servers hold, read in the one pass over them that both the provider and the meter
//! make: each server's GPUs (its flavor detected once per distinct flavor), its usage interval, and
//! per project the servers running and the GPUs they hold (the shares' "used").

use std::collections::BTreeMap;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::{LocalId, VoName};

use super::api::{Flavor, Server};
use super::capacity::kind_id;
use super::conventions::{FlavorGpu, Specs};
use super::detect::Detector;
use super::inventory::CloudState;
use super::usage::{VmUsage, holds_no_gpu, observe};
use super::vgpu::{Said, Types, resolve};

/// A flavor's GPUs with the capacity kind they count under, both shared: cloning one per server
/// costs no allocation.
type KnownGpu = Option<(Arc<FlavorGpu>, Arc<LocalId>)>;

/// Reads servers' GPUs, detecting each distinct flavor once: 100,000 servers use a few hundred
/// flavors, and detection (five conventions, model names) costs far more than a lookup.
struct ServerGpus<'a> {
    flavors: BTreeMap<&'a str, &'a Flavor>,
    detector: &'a Detector,
    /// By embedded flavor name, then extra specs text: hashing the name only, as a name nearly
    /// always has one text, is cheaper than hashing every server's specs.
    embedded: HashMap<&'a str, Vec<(&'a str, KnownGpu)>>,
    /// By flavor id, for clouds older than 2.47.
    listed: HashMap<&'a str, KnownGpu>,
    /// The cloud's vGPU types ([`super::layout::layout`]).
    types: Types,
}

impl<'a> ServerGpus<'a> {
    fn detect(&self, name: &str, specs: &Specs, said: &mut Said) -> KnownGpu {
        let detection = self.detector.detect(name, specs);
        said.warnings.extend(detection.warnings);
        self.known_gpu(detection.gpu, name, said)
    }

    /// A detected flavor's GPUs, shared, with a vGPU's share of a physical GPU filled in.
    fn known_gpu(&self, gpu: Option<FlavorGpu>, flavor: &str, said: &mut Said) -> KnownGpu {
        gpu.map(|mut gpu| {
            resolve(&mut gpu, &self.types, self.detector.devices(), flavor, said);
            let kind = kind_id(&gpu.spec);
            (Arc::new(gpu), Arc::new(kind))
        })
    }

    /// The GPUs of a server: its embedded flavor (2.47+) wins, as it is what the server was built
    /// with even when the flavor changed or is gone; else the flavor by id.
    fn of(&mut self, server: &'a Server, said: &mut Said) -> KnownGpu {
        match (server.flavor_specs(), server.flavor_id()) {
            (Some(raw), _) => {
                let name = server.flavor_name().unwrap_or_default();
                if let Some(seen) = self.embedded.get(name)
                    && let Some((_, known)) = seen.iter().find(|(text, _)| *text == raw)
                {
                    return known.clone();
                }
                let known = match serde_json::from_str::<Specs>(raw) {
                    Ok(specs) => self.detect(name, &specs, said),
                    Err(err) => {
                        said.warnings.insert(format!(
                            "flavor {name:?} (embedded in server {}): extra_specs unreadable, not counted: {err}",
                            server.id()
                        ));
                        None
                    }
                };
                self.embedded
                    .entry(name)
                    .or_default()
                    .push((raw, known.clone()));
                known
            }
            (None, Some(id)) => {
                if let Some(known) = self.listed.get(id) {
                    return known.clone();
                }
                let known = match self.flavors.get(id).copied() {
                    Some(flavor) => flavor
                        .extra_specs
                        .as_ref()
                        .and_then(|specs| self.detect(&flavor.name, specs, said)),
                    None => {
                        said.warnings.insert(format!(
                            "server {} ({}): flavor {id} no longer exists and this cloud does not embed flavors; GPUs unknown",
                            server.name(),
                            server.id()
                        ));
                        return None;
                    }
                };
                self.listed.insert(id, known.clone());
                known
            }
            (None, None) => None,
        }
    }
}

/// One project's servers, as counted in the pass over them.
#[derive(Default)]
struct Tally {
    vo: Option<Arc<VoName>>,
    /// Servers that hold what they were given (not deleted or offloaded).
    running: u32,
    /// GPUs held, by capacity kind.
    used: BTreeMap<LocalId, GpuCount>,
}

/// What the pass over the servers found.
pub(super) struct Holdings<'a> {
    /// One interval per server with GPUs.
    pub usage: Vec<VmUsage>,
    /// Servers that hold what they were given, by project id.
    pub running: BTreeMap<&'a str, u32>,
    /// GPUs held by those servers, by project id and capacity kind.
    pub used: BTreeMap<&'a str, BTreeMap<LocalId, GpuCount>>,
}

/// One pass over the servers: usage observations and per-project use, each server's project
/// looked up once (a hash of its id rather than three ordered searches).
pub(super) fn holdings<'a>(
    state: &'a CloudState,
    detector: &Detector,
    vos: &BTreeMap<&str, Arc<VoName>>,
    types: Types,
    said: &mut Said,
) -> Holdings<'a> {
    let mut server_gpus = ServerGpus {
        flavors: state.flavors.iter().map(|f| (f.id.as_str(), f)).collect(),
        detector,
        embedded: HashMap::new(),
        listed: HashMap::new(),
        types,
    };
    let mut usage = Vec::with_capacity(state.servers.len());
    let mut tallies: HashMap<&str, Tally> = HashMap::new();
    for server in &state.servers {
        let live = !holds_no_gpu(server.status());
        let tally = tallies.entry(server.tenant_id()).or_insert_with(|| Tally {
            vo: vos.get(server.tenant_id()).cloned(),
            ..Tally::default()
        });
        if live {
            tally.running += 1;
        }
        let Some((gpu, kind)) = server_gpus.of(server, said) else {
            continue;
        };
        if live {
            match tally.used.get_mut(kind.as_ref()) {
                Some(count) => *count = *count + gpu.count,
                None => {
                    tally.used.insert(LocalId::clone(&kind), gpu.count);
                }
            }
        }
        match observe(server, gpu, tally.vo.clone()) {
            Ok(observation) => usage.push(observation),
            Err(why) => {
                said.warnings.insert(why);
            }
        }
    }
    let running = tallies.iter().map(|(p, t)| (*p, t.running)).collect();
    let used = tallies
        .into_iter()
        .map(|(project, tally)| (project, tally.used))
        .collect();
    Holdings {
        usage,
        running,
        used,
    }
}
