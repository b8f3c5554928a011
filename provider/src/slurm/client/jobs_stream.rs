//! Reading the jobs of a period as they arrive, from `sacct --json` or slurmrestd's `slurmdb` jobs,
//! so memory does not grow with the number of jobs.

use std::io::Read;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::slurm::config::RestConfig;
use crate::slurm::error::SlurmError;
use crate::slurm::jobs::{JobProblem, JobsError, JobsSummary, SlurmJob, read_jobs};
use crate::slurm::negotiate::Api;

use super::SlurmClient;
use super::command::{Ended, Watchdog};
use super::rest::http_error;

impl SlurmClient {
    pub(super) fn jobs_cli(
        &self,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        on_job: &mut dyn FnMut(Result<SlurmJob, JobProblem>),
    ) -> Result<JobsSummary, SlurmError> {
        let start = start.format("%Y-%m-%dT%H:%M:%S").to_string();
        let end = end.format("%Y-%m-%dT%H:%M:%S").to_string();
        let mut args = vec![
            "--json",
            "--allusers",
            "--starttime",
            &start,
            "--endtime",
            &end,
        ];
        if let Some(cluster) = &self.cluster {
            args.extend(["--clusters", cluster]);
        }
        let (mut command, shown) = self.command("sacct", &args);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| SlurmError::Spawn {
                command: shown.clone(),
                message: err.to_string(),
            })?;
        let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            return Err(SlurmError::Spawn {
                command: shown,
                message: "no pipes to the child".to_owned(),
            });
        };
        let stderr_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let watchdog = Watchdog::start(child, Duration::from_secs(*self.cli.timeout_s.get_ref()));
        let parsed = read_jobs(stdout, on_job);
        let (status, ended) = watchdog.finish(parsed.is_err());
        let stderr = stderr_reader.join().unwrap_or_default().trim().to_owned();
        let failed =
            |status: Option<std::process::ExitStatus>, stderr: String| SlurmError::Failed {
                command: shown.clone(),
                status: status.map_or_else(|| "no exit status".to_owned(), |s| s.to_string()),
                stderr,
            };
        match (ended, status) {
            (Ended::TimedOut, _) => Err(SlurmError::Timeout {
                command: shown.clone(),
                timeout_s: *self.cli.timeout_s.get_ref(),
                stderr,
            }),
            // Stopped by us because its document had already been refused: that is the error.
            (Ended::Stopped, _) => Err(jobs_error(&shown, parsed)),
            (Ended::Exited, Some(status)) if status.success() => {
                parsed.map_err(|error| SlurmError::Jobs {
                    source_name: shown.clone(),
                    error,
                })
            }
            // A command that failed explains a truncated document better than the parser can.
            (Ended::Exited, status) => Err(failed(status, stderr)),
        }
    }

    pub(super) fn jobs_rest(
        &self,
        rest: &RestConfig,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        on_job: &mut dyn FnMut(Result<SlurmJob, JobProblem>),
    ) -> Result<JobsSummary, SlurmError> {
        // The version is picked in the download thread (an async request); it reports it here
        // so errors name the endpoint.
        let (version_sender, version_receiver) = mpsc::channel::<String>();
        // Slurm's own time syntax, which every API version parses (v0.0.38 refuses epoch
        // seconds). slurmrestd reads it in its host's zone: pad windows on hosts not in UTC.
        let time = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%S").to_string();
        let mut query = vec![("start_time", time(start)), ("end_time", time(end))];
        if let Some(cluster) = &self.cluster {
            query.push(("cluster", cluster.clone()));
        }
        let (sender, receiver) = mpsc::sync_channel::<Result<Vec<u8>, SlurmError>>(16);
        let this = self.clone();
        let rest_config = rest.clone();
        let downloader = std::thread::spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(err) => {
                    let _ = sender.send(Err(SlurmError::Http {
                        endpoint: format!("GET {}/slurmdb/", rest_config.url.get_ref()),
                        message: format!("cannot start the HTTP runtime: {err}"),
                        retryable: false,
                    }));
                    return;
                }
            };
            runtime.block_on(async move {
                let version = match this.rest_version(&rest_config, Api::Slurmdb).await {
                    Ok(version) => version,
                    Err(err) => {
                        let _ = sender.send(Err(err));
                        return;
                    }
                };
                let _ = version_sender.send(version.clone());
                let path = format!("slurmdb/{version}/jobs");
                let query: Vec<(&str, String)> =
                    query.iter().map(|(k, v)| (*k, v.clone())).collect();
                let mut response = match this.request(&rest_config, &path, &query).await {
                    Ok(response) => response,
                    Err(err) => {
                        let _ = sender.send(Err(err));
                        return;
                    }
                };
                let endpoint = response.url().to_string();
                loop {
                    match response.chunk().await {
                        Ok(Some(chunk)) => {
                            if sender.send(Ok(chunk.to_vec())).is_err() {
                                return;
                            }
                        }
                        Ok(None) => return,
                        Err(err) => {
                            let error = match this.https() {
                                Ok(client) => http_error(&endpoint, &err, client),
                                Err(error) => error,
                            };
                            let _ = sender.send(Err(error));
                            return;
                        }
                    }
                }
            });
        });
        let mut reader = ChannelReader {
            receiver,
            current: Vec::new(),
            position: 0,
            error: None,
        };
        let parsed = read_jobs(&mut reader, on_job);
        drop(reader.receiver);
        let _ = downloader.join();
        if let Some(error) = reader.error {
            return Err(error);
        }
        let version = version_receiver
            .try_recv()
            .unwrap_or_else(|_| "<version>".to_owned());
        parsed.map_err(|error| SlurmError::Jobs {
            source_name: format!("GET {}/slurmdb/{version}/jobs", rest.url.get_ref()),
            error,
        })
    }
}

/// Feeds downloaded chunks to the synchronous JSON reader.
pub(super) struct ChannelReader {
    receiver: mpsc::Receiver<Result<Vec<u8>, SlurmError>>,
    current: Vec<u8>,
    position: usize,
    error: Option<SlurmError>,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.position == self.current.len() {
            match self.receiver.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.position = 0;
                }
                Ok(Err(error)) => {
                    let message = error.to_string();
                    self.error = Some(error);
                    return Err(std::io::Error::other(message));
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.position);
        buf[..n].copy_from_slice(&self.current[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

pub(super) fn jobs_error(shown: &str, parsed: Result<JobsSummary, JobsError>) -> SlurmError {
    match parsed {
        Err(error) => SlurmError::Jobs {
            source_name: shown.to_owned(),
            error,
        },
        Ok(_) => SlurmError::Worker(format!("`{shown}` was stopped after a good document")),
    }
}
