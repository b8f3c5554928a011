//! GPU servers whose instance actions the listing makes unnecessary: a server **settled** since
//! before the window's month has been in one state, known from its status, for every month the
//! meter re-sends, so it is not asked for its actions (one Nova request per server, the meter's
//! largest cost on a cloud of long-running VMs).
//!
//! Why the listing suffices (Nova, checked in Zed's source): `updated` is the instance row's
//! `updated_at`, which oslo.db's `TimestampMixin` sets on every UPDATE of the row, and each action
//! that changes a power state saves the row at its end (`vm_state`, `task_state`), after its
//! action was recorded. So a server whose `updated` is before an instant had no state change from
//! then on, and its status says which state that is: `ACTIVE` running, `SHUTOFF`, `SUSPENDED`,
//! `PAUSED` or `SHELVED` idle ([`super::states::is_idle_status`]). Any other status (building,
//! resizing, rescued, offloaded, deleted...) is asked, as is every server changed since.
//!
//! Why from the start of the window's **month** and not the window's start: records are per
//! month and carry absolute values, so a month the meter sends must be whole, and the server's
//! state before `updated` is not known without its actions. A settled server's observation is
//! therefore cut at that month's start ([`clip`]): its months before it are not re-sent and stand as
//! an earlier run sent them (a run with an earlier `--since` re-reads them). The months from it on
//! are exactly what the actions would give: one state throughout.
//!
//! What does not work, and why it is not used: `updated` equal to `OS-SRV-USG:launched_at` does not
//! say "never stopped". Nova sets `launched_at` again at every spawn, not only the first
//! (`_update_instance_after_spawn` in a rebuild and in the unshelve of an offloaded server;
//! `_finish_resize` and `_finish_revert_resize` too), and saves it last, so a server stopped or
//! offloaded and then rebuilt or unshelved looks never touched.

use chrono::{DateTime, Datelike, TimeZone, Utc};

use accelfed_schemas::usage::Observation;

use super::states::{State, is_idle_status};
use super::usage::parse_time;

/// The first instant of `since`'s calendar month (UTC, the months of the records).
pub fn month_start(since: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(since.year(), since.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(since)
}

/// The state a server with `status` and `updated` has been in, unchanged, since before `from`;
/// `None` when the listing cannot say (changed since, or a status that is neither running nor
/// idle), and its actions must be read. `updated` has whole seconds: strictly before `from` keeps
/// a change within `from`'s own second on the side of asking.
pub fn settled(status: &str, updated: Option<&str>, from: DateTime<Utc>) -> Option<State> {
    let updated = parse_time(updated?)?;
    if updated >= from {
        return None;
    }
    if status.eq_ignore_ascii_case("ACTIVE") {
        Some(State::Running)
    } else if is_idle_status(status) {
        Some(State::Idle)
    } else {
        None
    }
}

/// A settled server's observation from `from` on, in `state` (idle: utilisation 0; running:
/// unknown); `None` when nothing of it is left from `from` on.
pub fn clip(observation: &Observation, from: DateTime<Utc>, state: State) -> Option<Observation> {
    if observation.end.is_some_and(|end| end <= from) || state == State::Offloaded {
        return None;
    }
    let mut piece = observation.clone();
    piece.start = piece.start.max(from);
    piece.utilisation = match state {
        State::Idle => Some(0.0),
        State::Running | State::Offloaded => None,
    };
    Some(piece)
}

#[cfg(test)]
#[path = "settled_tests.rs"]
mod tests;
