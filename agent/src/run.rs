//! The agent's loop: read the GPUs, count the window, save the state, publish; every period.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::http::{Published, serve};
use crate::ledger::Ledger;
use crate::nvml_reader::NvmlReader;
use crate::reading::GpuReading;
use crate::{render, state};

/// An agent ready to run: the library loaded, the state read.
#[derive(Debug)]
pub struct Agent {
    config: AgentConfig,
    reader: NvmlReader,
    ledger: Ledger,
    published: Arc<Mutex<Published>>,
}

impl Agent {
    /// Loads NVML and the state file: the errors a start can meet, before anything listens.
    pub fn open(config: AgentConfig) -> Result<Self, AgentError> {
        let reader = NvmlReader::open(&config)?;
        let ledger = state::load(&config.state_file)?;
        Ok(Self {
            config,
            reader,
            ledger,
            published: Arc::default(),
        })
    }

    /// One period: read, count, save, publish. Returns the readings.
    pub fn tick(&mut self) -> Result<Vec<GpuReading>, AgentError> {
        let readings = self.reader.read()?;
        let now = now_ms();
        self.ledger.apply(
            &readings,
            &self.config.idle_rule,
            self.config.attributable_gap_ms(),
        );
        let retention = u64::try_from(self.config.retention.as_millis()).unwrap_or(u64::MAX);
        self.ledger.prune(now.saturating_sub(retention));
        state::save(&self.config.state_file, &self.ledger)?;
        let json = render::json(
            &self.ledger,
            &readings,
            now,
            self.config.period.as_secs_f64(),
            &self.config.idle_rule,
        );
        if let Some(path) = &self.config.publish
            && let Err(error) = state::publish(path, &json)
        {
            // The endpoint and the state file still hold everything: the next period retries.
            tracing::warn!(%error, "could not publish the state document");
        }
        let prometheus = render::prometheus(&self.ledger, &readings);
        let mut published = self
            .published
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        published.json = json.to_string();
        published.prometheus = prometheus;
        Ok(readings)
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The JSON document of the last period.
    pub fn json(&self) -> String {
        self.published
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .json
            .clone()
    }
}

/// Runs `agent` until `stop` is set: the endpoint on `listener`, a reading every period. A
/// failed state write stops the agent (counting on without saving would count twice after a
/// restart); a failed reading is logged and retried next period.
pub fn run(mut agent: Agent, listener: TcpListener, stop: &AtomicBool) -> Result<(), AgentError> {
    let published = Arc::clone(&agent.published);
    std::thread::Builder::new()
        .name("agent-http".into())
        .spawn(move || serve(listener, published))
        .map_err(|e| AgentError::Listen {
            address: "endpoint thread".into(),
            detail: e.to_string(),
        })?;
    let period = agent.config.period;
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        match agent.tick() {
            Ok(_) => {}
            Err(error @ AgentError::State { .. }) => return Err(error),
            Err(error) => tracing::warn!(%error, "reading failed; next period retries"),
        }
        next += period;
        let now = Instant::now();
        if next < now {
            next = now; // a slow reading: skip the missed ticks rather than rush
        }
        while !stop.load(Ordering::Relaxed) && Instant::now() < next {
            std::thread::sleep((next - Instant::now()).min(Duration::from_millis(200)));
        }
    }
    Ok(())
}

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
