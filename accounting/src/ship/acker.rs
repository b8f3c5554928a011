//! Marking acknowledged records in the spool on a thread of its own, with a connection of its own,
//! so the shipper goes on reading and sending while the marks are written (each batch's marks are
//! one transaction; the spool is in WAL mode, so reading the next pages does not wait for them).
//! Marks are written in the order they are handed over, and [`Acker::finish`] returns only when
//! every mark handed over is committed ([`Spool::acknowledge`] says why a mark need not wait for
//! the disk).

use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::spool::{Ack, Spool, SpoolError};

pub(super) struct Acker {
    sender: mpsc::Sender<Vec<Ack>>,
    thread: JoinHandle<Result<usize, SpoolError>>,
}

impl Acker {
    /// Opens a second connection to `spool`'s file and starts the thread.
    pub(super) fn start(spool: &Spool) -> Result<Self, SpoolError> {
        let mut own = Spool::open(spool.path())?;
        let (sender, receiver) = mpsc::channel::<Vec<Ack>>();
        let thread = std::thread::Builder::new()
            .name("spool-acks".to_owned())
            .spawn(move || {
                let mut marked = 0;
                for acks in receiver {
                    marked += own.acknowledge(&acks)?;
                }
                Ok(marked)
            })
            .map_err(|source| SpoolError::Thread {
                path: spool.path().to_path_buf(),
                message: source.to_string(),
            })?;
        Ok(Self { sender, thread })
    }

    /// Hands over one batch's marks. `false` if the thread has stopped on an error, which
    /// [`Self::finish`] returns.
    pub(super) fn mark(&self, acks: Vec<Ack>) -> bool {
        self.sender.send(acks).is_ok()
    }

    /// Waits until every mark handed over is written; how many records were marked.
    pub(super) fn finish(self, spool: &Spool) -> Result<usize, SpoolError> {
        drop(self.sender);
        self.thread.join().unwrap_or_else(|_| {
            Err(SpoolError::Thread {
                path: spool.path().to_path_buf(),
                message: "the thread marking acknowledgements panicked".to_owned(),
            })
        })
    }
}
