//! Slurm's output as the provider and the meter read it (`scontrol show nodes|partitions --json`,
//! slurmrestd, `sacct --json`, `scontrol show partitions` text, GRES and TRES strings). The first
//! byte picks the reader; the rest is its input. Whatever is read maps to GLUE2 or observations;
//! GRES and TRES strings are also mapped as a node's.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use accelfed_fuzz::{Trickle, select};
use accelfed_provider::config::Config;
use accelfed_provider::slurm::{
    Inventory, SlurmConfig, checked_service, observation, parse_gpu_gres, parse_nodes,
    parse_partitions, parse_scontrol_text, parse_tres_string, read_jobs, service,
};
use accelfed_schemas::names::SiteName;
use libfuzzer_sys::fuzz_target;

fn config() -> &'static SlurmConfig {
    static CONFIG: OnceLock<SlurmConfig> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let text = include_str!("../../examples/slurm-site.toml");
        let mut config = Config::parse(Path::new("slurm-site.toml"), text).expect("the example");
        config.slurm.remove(0)
    })
}

fn map(inventory: &Inventory) {
    let mapped = service(config(), inventory);
    for warning in &mapped.warnings {
        assert!(!warning.is_empty());
    }
}

/// A one-node cluster whose node prints `gres` and `tres`, read and mapped as `provide` does
/// (GRES types of odd shapes reach the map this way: `gpu:-SHARED:1`, 256+ characters).
fn map_node(gres: &str, tres: &str) {
    let document = serde_json::json!({
        "meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}, "slurm": {"release": "23.11.4"}},
        "nodes": [{"name": "fuzz01", "state": ["IDLE"], "partitions": ["gpu"], "cpus": 8,
                   "alloc_cpus": 0, "gres": gres, "gres_used": "", "tres": tres}],
    });
    let Ok(bytes) = serde_json::to_vec(&document) else {
        return;
    };
    if let Ok(document) = parse_nodes(&bytes) {
        let inventory = Inventory {
            version: document.version,
            release: document.release,
            nodes: document.nodes,
            partitions: Vec::new(),
            problems: document.problems,
        };
        if let Ok(mapped) = checked_service(config(), &inventory) {
            for warning in &mapped.warnings {
                assert!(!warning.is_empty());
            }
        }
        // Unchecked, the map itself must not panic either.
        map(&inventory);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((selector, input)) = select(data) else {
        return;
    };
    match selector % 6 {
        0 => {
            if let Ok(document) = parse_nodes(input) {
                map(&Inventory {
                    version: document.version,
                    release: document.release,
                    nodes: document.nodes,
                    partitions: Vec::new(),
                    problems: document.problems,
                });
            }
        }
        1 => {
            if let Ok(partitions) = parse_partitions(input) {
                map(&Inventory {
                    version: accelfed_provider::slurm::DataVersion::Modern(40),
                    release: String::new(),
                    nodes: Vec::new(),
                    partitions,
                    problems: Vec::new(),
                });
            }
        }
        2 => {
            let site = SiteName::new("FUZZ-SITE").expect("a valid name");
            let chunk = usize::from(selector / 6) * 17 + 1;
            let mut jobs = Vec::new();
            let read = read_jobs(Trickle { data: input, chunk }, &mut |job| {
                if let Ok(job) = job {
                    jobs.push(job);
                }
            });
            if let Ok(summary) = read {
                assert!(summary.jobs >= jobs.len() as u64);
                for job in &jobs {
                    let _ = observation(config(), &site, job);
                }
            }
        }
        3 => {
            if let Ok(text) = std::str::from_utf8(input) {
                let partitions = parse_scontrol_text(text);
                map(&Inventory {
                    version: accelfed_provider::slurm::DataVersion::V0038,
                    release: String::new(),
                    nodes: Vec::new(),
                    partitions,
                    problems: Vec::new(),
                });
            }
        }
        4 => {
            if let Ok(text) = std::str::from_utf8(input) {
                let _ = parse_gpu_gres(text).map_err(|error| error.to_string());
                map_node(text, "");
            }
        }
        _ => {
            if let Ok(text) = std::str::from_utf8(input) {
                let _ = parse_tres_string(text).map_err(|error| error.to_string());
                // A node whose GRES says nothing counts its GPUs (and their type) from tres.
                map_node("", text);
            }
        }
    }
});
