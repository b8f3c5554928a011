//! What Nova knows for sure about a GPU server's activity: its power states over time, from its
//! instance actions (`GET /servers/{id}/os-instance-actions`). Pure: the client asks, this reads
//! and cuts observations.
//!
//! A server that is SHUTOFF (`stop`), SUSPENDED (`suspend`), PAUSED (`pause`) or SHELVED
//! (`shelve`, not yet offloaded) keeps its passthrough GPUs or vGPUs (Nova frees them only when it
//! offloads the server) and runs nothing on them: it is **idle** from the action's start until the
//! action that brings it back (`start`, `resume`, `unpause`, `unshelve`). `shelveOffload` frees
//! the GPUs: the server holds none until `unshelve`. Every other action (reboot, resize,
//! migration...) changes neither. What a running server does on its GPUs Nova does not know.
//!
//! [`split`] cuts a server's observation where its state changes: an idle piece has utilisation 0
//! (ActiveDuration 0), a running piece none (ActiveDuration unknown), an offloaded piece is no
//! piece. The accounting side merges one month's pieces into one record
//! (`accounting::meter::merge_periods`): a month the server spent wholly stopped has ActiveDuration
//! 0, a month with running time has none, as its activity while running is not known.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use accelfed_schemas::usage::Observation;

use super::usage::parse_time;

/// What a server's GPUs do, as far as Nova knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Running: its GPUs' activity is not known.
    Running,
    /// Stopped, suspended, paused or shelved: it holds its GPUs and does nothing on them.
    Idle,
    /// Shelved and offloaded: it holds no GPU.
    Offloaded,
}

/// One change of state: from `at` on, the server is in `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub at: DateTime<Utc>,
    pub state: State,
}

#[derive(Debug, Deserialize)]
struct Listing {
    #[serde(rename = "instanceActions")]
    instance_actions: Vec<Action>,
}

#[derive(Debug, Deserialize)]
struct Action {
    action: String,
    start_time: String,
}

/// The state an action puts a server in; `None` for actions that change no power state.
fn state_after(action: &str) -> Option<State> {
    match action {
        "stop" | "suspend" | "pause" | "shelve" => Some(State::Idle),
        "start" | "resume" | "unpause" | "unshelve" => Some(State::Running),
        "shelveOffload" => Some(State::Offloaded),
        _ => None,
    }
}

/// A server's state changes, oldest first, from Nova's answer (newest first, as Nova lists them).
/// `Err` names the action whose time cannot be read.
pub fn read(body: &[u8]) -> Result<Vec<Change>, String> {
    let listing: Listing = serde_json::from_slice(body).map_err(|err| err.to_string())?;
    let mut changes = Vec::new();
    for action in listing.instance_actions {
        let Some(state) = state_after(&action.action) else {
            continue;
        };
        let at = parse_time(&action.start_time).ok_or_else(|| {
            format!(
                "action {:?}: start_time {:?} is not a time",
                action.action, action.start_time
            )
        })?;
        changes.push(Change { at, state });
    }
    changes.sort_by_key(|c| c.at);
    Ok(changes)
}

/// Nova statuses in which a server holds its GPUs and runs nothing on them.
pub fn is_idle_status(status: &str) -> bool {
    ["SHUTOFF", "SUSPENDED", "PAUSED", "SHELVED"]
        .iter()
        .any(|s| status.eq_ignore_ascii_case(s))
}

/// A warning where the server's status says idle but its actions do not say since when (an action
/// list cut short, a state Nova set without an action): its idle time then stays unknown, never
/// guessed.
pub fn check(server: &str, status: &str, changes: &[Change]) -> Option<String> {
    let last = changes.last().map_or(State::Running, |c| c.state);
    (is_idle_status(status) && last != State::Idle).then(|| {
        format!(
            "server {server} is {status} but its instance actions do not say since when; its idle time stays unknown"
        )
    })
}

/// `observation` cut at `changes` (see the module documentation): idle pieces with utilisation 0,
/// running pieces with none, offloaded pieces left out. Without changes, the observation as it is.
pub fn split(observation: &Observation, changes: &[Change]) -> Vec<Observation> {
    if changes.is_empty() {
        return vec![observation.clone()];
    }
    let mut pieces = Vec::new();
    let mut state = State::Running;
    let mut from = observation.start;
    let mut push = |state: State, from: DateTime<Utc>, to: Option<DateTime<Utc>>| {
        if to.is_some_and(|to| to <= from) || state == State::Offloaded {
            return;
        }
        let mut piece = observation.clone();
        piece.start = from;
        piece.end = to;
        piece.utilisation = match state {
            State::Idle => Some(0.0),
            State::Running | State::Offloaded => None,
        };
        // Energy is not shared out over pieces: no OpenStack source measures it.
        pieces.push(piece);
    };
    for change in changes {
        if change.state == state {
            continue;
        }
        let at = change.at.max(observation.start);
        if observation.end.is_some_and(|end| at >= end) {
            break;
        }
        push(state, from, Some(at));
        state = change.state;
        from = at;
    }
    push(state, from, observation.end);
    pieces
}

#[cfg(test)]
#[path = "states_tests.rs"]
mod tests;
