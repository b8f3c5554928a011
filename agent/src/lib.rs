//! accelfed's node agent (`accelfed agent`): what each GPU of a node does, and for whom.
//!
//! Every period it reads NVML (through `nvml-wrapper`, from a library path given or
//! `libnvidia-ml.so.1`): each GPU's identity, utilisation, memory, power and energy counter, its
//! MIG and vGPU instances, and who holds it: processes (attributed through their cgroup to a
//! Slurm job or a Kubernetes pod) and vGPU instances (attributed to their VM). A ledger keeps,
//! per holder and GPU, the held, active and idle seconds and the energy, in a small state file
//! that survives restarts, served on a local HTTP endpoint as Prometheus text and JSON for the
//! meter. What counts as idle is one rule, [`idle::IdleRule`] (docs/architecture.md).
//!
//! * [`config`]: the agent's settings; [`error`]: what can stop it;
//! * [`reading`]: one period's readings; [`nvml_reader`] makes them from NVML;
//! * [`cgroup`]: process -> Slurm job or pod; [`holder`]: who holds a GPU;
//! * [`idle`]: the idle rule; [`ledger`]: the counters; [`state`]: their file;
//! * [`render`]: JSON and Prometheus text; [`http`]: the endpoint; [`run`]: the loop;
//! * [`idle_list`]: the allocations idle now, from the JSON (`accelfed idle`).

pub mod cgroup;
pub mod config;
pub mod error;
pub mod holder;
pub mod http;
pub mod idle;
pub mod idle_list;
pub mod ledger;
pub mod nvml_reader;
pub mod reading;
pub mod render;
pub mod run;
pub mod state;

pub use config::AgentConfig;
pub use error::AgentError;
pub use run::{Agent, run};
