//! `accelfed agent`: the node agent (crate `accelfed-agent`) as a long-running process.

use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use accelfed_agent::{Agent, AgentConfig, AgentError};

use crate::args::agent::AgentArgs;
use crate::exit::Outcome;

pub fn run(args: &AgentArgs) -> Outcome {
    let mut config = AgentConfig::new(args.state.clone());
    config.library.clone_from(&args.nvml_library);
    config.period = Duration::from_secs_f64(args.period);
    config.listen = args.listen;
    config.proc_root.clone_from(&args.proc_root);
    config.idle_rule.sm_activity_below_percent = args.idle_below;
    config.publish.clone_from(&args.publish);
    let mut agent = match Agent::open(config) {
        Ok(agent) => agent,
        Err(error) => return failed(&error),
    };
    if args.once {
        return match agent.tick() {
            Ok(_) => {
                println!("{}", agent.json());
                Outcome::Ok
            }
            Err(error) => failed(&error),
        };
    }
    let listener = match TcpListener::bind(args.listen) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!("the agent's endpoint {}: {error}", args.listen);
            return Outcome::Config;
        }
    };
    match listener.local_addr() {
        Ok(address) => {
            println!("accelfed agent: listening on http://{address} (/metrics, /v1/state)")
        }
        Err(error) => tracing::warn!(%error, "endpoint address unknown"),
    }
    // Stopped by a signal: the state is saved every period, so nothing is lost or counted twice.
    let stop = AtomicBool::new(false);
    match accelfed_agent::run(agent, listener, &stop) {
        Ok(()) => Outcome::Ok,
        Err(error) => failed(&error),
    }
}

/// A missing library, driver or GPU ends the agent with 1 (the source failed), as a backend that
/// cannot be reached ends `meter`; an unreadable state file with 2 (the node's configuration).
fn failed(error: &AgentError) -> Outcome {
    tracing::error!("{error}");
    match error {
        AgentError::State { .. } | AgentError::Listen { .. } => Outcome::Config,
        _ => Outcome::Partial,
    }
}
