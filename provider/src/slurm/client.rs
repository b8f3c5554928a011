//! The only file that does IO: runs `sinfo`, `scontrol` and `sacct` (each with a timeout, killed when
//! it passes), or asks slurmrestd with a JWT. Everything it reads goes to the pure parsers.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use accelfed_net::{ClientSettings, HttpsClient, Trust};
use chrono::{DateTime, Utc};

use super::config::{CliConfig, RestConfig, SlurmConfig};
use super::documents::{is_sinfo_list, parse_nodes, parse_partitions};
use super::error::SlurmError;
use super::inventory::Inventory;
use super::jobs::{JobProblem, JobsError, JobsSummary, SlurmJob, read_jobs};
use super::negotiate::{self, Api};
use super::partitions::parse_scontrol_text;
use super::version::{DataVersion, KNOWN_MINORS};

/// Reads one configured cluster.
#[derive(Debug, Clone)]
pub struct SlurmClient {
    cli: CliConfig,
    rest: Option<RestConfig>,
    cluster: Option<String>,
    /// slurmrestd's HTTPS client, one per run (a handle to one connection pool), or why it could
    /// not be built (`rest.ca` unreadable), reported by the first request.
    http: Option<Result<HttpsClient, String>>,
}

impl SlurmClient {
    pub fn new(config: &SlurmConfig) -> Self {
        let http = config.rest.as_ref().map(|rest| {
            let trust = Trust::optional("rest.ca", rest.ca.as_deref())?;
            let deadline = Duration::from_secs(*rest.timeout_s.get_ref());
            HttpsClient::new(&ClientSettings::new(trust, deadline)).map_err(|err| err.to_string())
        });
        Self {
            cli: config.cli.clone(),
            rest: config.rest.clone(),
            cluster: config.cluster.as_ref().map(|c| c.as_str().to_owned()),
            http,
        }
    }

    /// Nodes and partitions, now.
    pub async fn inventory(&self) -> Result<Inventory, SlurmError> {
        match &self.rest {
            Some(rest) => self.inventory_rest(rest).await,
            None => self.inventory_cli().await,
        }
    }

    async fn inventory_cli(&self) -> Result<Inventory, SlurmError> {
        let sinfo = self.run("sinfo", &["--json"]).await?;
        let (nodes_source, nodes_bytes) = if is_sinfo_list(&sinfo.1) {
            // 23.02+: `sinfo --json` groups nodes; `scontrol show nodes --json` lists them.
            self.run("scontrol", &["show", "nodes", "--json"]).await?
        } else {
            sinfo
        };
        let nodes = parse_nodes(&nodes_bytes).map_err(|error| SlurmError::Document {
            source_name: nodes_source.clone(),
            error,
        })?;
        let partitions = if nodes.version == DataVersion::V0038 {
            let (_, text) = self
                .run("scontrol", &["-a", "-o", "show", "partition"])
                .await?;
            parse_scontrol_text(&String::from_utf8_lossy(&text))
        } else {
            let (source_name, bytes) = self
                .run("scontrol", &["-a", "show", "partitions", "--json"])
                .await?;
            parse_partitions(&bytes).map_err(|error| SlurmError::Document { source_name, error })?
        };
        Ok(Inventory::new(nodes, partitions))
    }

    /// The data version to ask for: the configured one, else the newest one both slurmrestd's
    /// OpenAPI document and accelfed know for `api`.
    async fn rest_version(&self, rest: &RestConfig, api: Api) -> Result<String, SlurmError> {
        if let Some(version) = &rest.api_version {
            return Ok(version.get_ref().as_str().to_owned());
        }
        let (source, bytes) = self.get(rest, "openapi/v3").await.map_err(|err| match err {
            SlurmError::Http {
                endpoint,
                message,
                retryable,
            } => SlurmError::Http {
                endpoint,
                message: format!(
                    "{message}; the data versions slurmrestd serves could not be read (accelfed reads v0.0.{} to v0.0.{}: set rest.api_version to one the server serves)",
                    KNOWN_MINORS.start(),
                    KNOWN_MINORS.end()
                ),
                retryable,
            },
            other => other,
        })?;
        negotiate::offered(&bytes)
            .and_then(|offered| negotiate::pick(&offered, api))
            .map(DataVersion::name)
            .map_err(|message| SlurmError::Http {
                endpoint: source,
                message,
                retryable: false,
            })
    }

    async fn inventory_rest(&self, rest: &RestConfig) -> Result<Inventory, SlurmError> {
        let version = self.rest_version(rest, Api::Slurm).await?;
        let version = version.as_str();
        let (nodes_source, nodes_bytes) = self.get(rest, &format!("slurm/{version}/nodes")).await?;
        let nodes = parse_nodes(&nodes_bytes).map_err(|error| SlurmError::Document {
            source_name: nodes_source,
            error,
        })?;
        let (source_name, bytes) = self
            .get(rest, &format!("slurm/{version}/partitions"))
            .await?;
        let partitions = parse_partitions(&bytes)
            .map_err(|error| SlurmError::Document { source_name, error })?;
        Ok(Inventory::new(nodes, partitions))
    }

    fn command_path(&self, name: &str) -> PathBuf {
        match &self.cli.bin_dir {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        }
    }

    fn command(&self, name: &str, args: &[&str]) -> (Command, String) {
        let mut command = Command::new(self.command_path(name));
        command.args(args);
        // sacct reads and prints times in the local zone; accelfed works in UTC.
        command.env("TZ", "UTC");
        if let Some(conf) = &self.cli.slurm_conf {
            command.env("SLURM_CONF", conf);
        }
        let shown = format!("{} {}", self.command_path(name).display(), args.join(" "));
        (command, shown)
    }

    /// Runs a command to completion; its stdout, or an error naming it with status and stderr.
    /// A command killed at its timeout is reported with the stderr it wrote until then.
    async fn run(&self, name: &str, args: &[&str]) -> Result<(String, Vec<u8>), SlurmError> {
        use tokio::io::AsyncReadExt;

        let (mut command, shown) = self.command(name, args);
        // Its own process group, so a wrapper script's children go with it at the timeout.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut command = tokio::process::Command::from(command);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let spawn_error = |message: String| SlurmError::Spawn {
            command: shown.clone(),
            message,
        };
        let mut child = command
            .spawn()
            .map_err(|err| spawn_error(err.to_string()))?;
        let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_error("no pipes to the child".to_owned()));
        };
        // stderr is collected as it arrives, so a command killed at its timeout still says why.
        let written = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let collected = written.clone();
        let stderr_reader = tokio::spawn(async move {
            let mut chunk = [0_u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
                if let Ok(mut text) = collected.lock() {
                    text.extend_from_slice(&chunk[..n]);
                }
            }
        });
        let stderr_text = |written: &std::sync::Mutex<Vec<u8>>| {
            written
                .lock()
                .map(|text| String::from_utf8_lossy(&text).trim().to_owned())
                .unwrap_or_default()
        };
        let finished = async {
            let mut output = Vec::new();
            stdout.read_to_end(&mut output).await?;
            let status = child.wait().await?;
            Ok::<_, std::io::Error>((output, status))
        };
        let timeout = Duration::from_secs(*self.cli.timeout_s.get_ref());
        let result = tokio::time::timeout(timeout, finished).await;
        let (output, status) = match result {
            Ok(Ok(done)) => done,
            Ok(Err(err)) => return Err(spawn_error(err.to_string())),
            Err(_) => {
                if let Some(id) = child.id() {
                    let group = format!("-{id}");
                    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                }
                let _ = child.kill().await;
                stderr_reader.abort();
                return Err(SlurmError::Timeout {
                    command: shown,
                    timeout_s: *self.cli.timeout_s.get_ref(),
                    stderr: stderr_text(&written),
                });
            }
        };
        // The command exited; its stderr ends with it (or soon after, for a lingering child).
        let _ = tokio::time::timeout(Duration::from_secs(1), stderr_reader).await;
        if !status.success() {
            return Err(SlurmError::Failed {
                command: shown,
                status: status.to_string(),
                stderr: stderr_text(&written),
            });
        }
        Ok((shown, output))
    }

    async fn get(&self, rest: &RestConfig, path: &str) -> Result<(String, Vec<u8>), SlurmError> {
        let response = self.request(rest, path, &[]).await?;
        let client = self.https()?;
        let endpoint = response.url().to_string();
        let bytes = response
            .bytes()
            .await
            .map_err(|err| http_error(&endpoint, &err, client))?;
        Ok((format!("GET {endpoint}"), bytes.to_vec()))
    }

    async fn request(
        &self,
        rest: &RestConfig,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<reqwest::Response, SlurmError> {
        let endpoint = format!(
            "{}/{path}",
            rest.url.get_ref().as_str().trim_end_matches('/')
        );
        let client = self.https()?;
        // Read on every request: a site may renew the token between them.
        let token = std::fs::read_to_string(&rest.token_file).map_err(|err| SlurmError::Token {
            path: rest.token_file.display().to_string(),
            message: err.to_string(),
        })?;
        accelfed_net::secret::warn_if_exposed("slurmrestd token_file", &rest.token_file);
        let response = client
            .http()
            .get(&endpoint)
            .query(query)
            .header("X-SLURM-USER-NAME", rest.user.as_str())
            .header("X-SLURM-USER-TOKEN", token.trim())
            .send()
            .await
            .map_err(|err| http_error(&endpoint, &err, client))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            // A 404 on a versioned path is nearly always a data version this slurmrestd does not
            // serve (current releases dropped v0.0.38): say so rather than a bare 404.
            let hint = match (status.as_u16(), &rest.api_version) {
                (404, Some(version)) if path.contains("/v0.0.") => format!(
                    " (slurmrestd may not serve data version {}, set in rest.api_version: its /openapi/v3 lists what it serves; leave rest.api_version unset to pick the newest both sides know)",
                    version.get_ref()
                ),
                _ => String::new(),
            };
            return Err(SlurmError::Http {
                endpoint: format!("GET {endpoint}"),
                message: format!(
                    "HTTP {status}: {}{hint}",
                    body.chars().take(500).collect::<String>()
                ),
                retryable: status.is_server_error() || status.as_u16() == 429,
            });
        }
        Ok(response)
    }

    /// Reads the jobs that ran in `[start, end)`, passing each to `on_job` as it is read, so memory
    /// does not grow with the number of jobs. Blocking: call it from a thread that may block (the
    /// REST path runs its own small runtime for the download). The jobs are provisional until this
    /// returns `Ok` (see [`read_jobs`]); on an error, write nothing from this run.
    pub fn jobs_blocking(
        &self,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        on_job: &mut dyn FnMut(Result<SlurmJob, JobProblem>),
    ) -> Result<JobsSummary, SlurmError> {
        match &self.rest {
            Some(rest) => self.jobs_rest(rest, start, end, on_job),
            None => self.jobs_cli(start, end, on_job),
        }
    }

    fn jobs_cli(
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

    fn jobs_rest(
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

impl SlurmClient {
    /// The HTTPS client built for this run.
    fn https(&self) -> Result<&HttpsClient, SlurmError> {
        match &self.http {
            Some(Ok(client)) => Ok(client),
            Some(Err(message)) => Err(SlurmError::Http {
                endpoint: self
                    .rest
                    .as_ref()
                    .map_or_else(String::new, |rest| rest.url.get_ref().as_str().to_owned()),
                message: message.clone(),
                retryable: false,
            }),
            None => Err(SlurmError::Worker(
                "slurmrestd asked without a [slurm.rest] table".to_owned(),
            )),
        }
    }
}

/// A transport failure with its chain of causes ("connection refused", "invalid peer certificate:
/// UnknownIssuer"; reqwest's own text repeats the URL and stops at "error sending request"), or
/// `timed out after N s` (the one deadline, `rest.timeout_s`). A certificate slurmrestd's server
/// does not pass, or a port that does not speak TLS, is never cured by running again.
fn http_error(endpoint: &str, err: &reqwest::Error, client: &HttpsClient) -> SlurmError {
    let kind = if err.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let mut message = if err.is_timeout() {
        client.describe(err)
    } else if std::error::Error::source(err).is_some() {
        format!("{kind}: {}", client.describe(err))
    } else {
        err.to_string()
    };
    let permanent = accelfed_net::cause::is_permanent(err);
    if permanent {
        message.push_str(" (retry will not help: check rest.url, and that the system's CAs or rest.ca trust the server's certificate)");
    }
    SlurmError::Http {
        endpoint: format!("GET {endpoint}"),
        message,
        retryable: !permanent && (err.is_timeout() || err.is_connect() || err.is_request()),
    }
}

/// Feeds downloaded chunks to the synchronous JSON reader.
struct ChannelReader {
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

fn jobs_error(shown: &str, parsed: Result<JobsSummary, JobsError>) -> SlurmError {
    match parsed {
        Err(error) => SlurmError::Jobs {
            source_name: shown.to_owned(),
            error,
        },
        Ok(_) => SlurmError::Worker(format!("`{shown}` was stopped after a good document")),
    }
}

/// How a command run by [`Watchdog`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// By itself.
    Exited,
    /// Killed at its timeout.
    TimedOut,
    /// Killed because its output was no longer wanted (its document was refused) and it did not
    /// exit within a short grace time.
    Stopped,
}

/// Kills a child that runs past its time, or whose output was abandoned; reaps it either way.
struct Watchdog {
    done: mpsc::Sender<bool>,
    thread: std::thread::JoinHandle<(Option<std::process::ExitStatus>, Ended)>,
}

/// How long a command whose output was abandoned may take to exit by itself (with its own error,
/// which explains a truncated document better than the parser).
const GRACE: Duration = Duration::from_secs(2);

impl Watchdog {
    fn start(mut child: std::process::Child, timeout: Duration) -> Self {
        let (done, finished) = mpsc::channel::<bool>();
        let started = std::time::Instant::now();
        let thread = std::thread::spawn(move || {
            let ended = match finished.recv_timeout(timeout) {
                Err(mpsc::RecvTimeoutError::Timeout) => Ended::TimedOut,
                Ok(true) => {
                    let grace = GRACE.min(timeout.saturating_sub(started.elapsed()));
                    let deadline = std::time::Instant::now() + grace;
                    loop {
                        match child.try_wait() {
                            Ok(Some(_)) | Err(_) => break Ended::Exited,
                            Ok(None) if std::time::Instant::now() >= deadline => {
                                break Ended::Stopped;
                            }
                            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                        }
                    }
                }
                Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => Ended::Exited,
            };
            if ended != Ended::Exited {
                // The command runs in its own process group: a wrapper script's children (which
                // hold the output pipe open) go with it.
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                let _ = child.kill();
            }
            (child.wait().ok(), ended)
        });
        Self { done, thread }
    }

    /// Called once the output has been read to its end (`abandoned = false`) or given up on.
    fn finish(self, abandoned: bool) -> (Option<std::process::ExitStatus>, Ended) {
        let _ = self.done.send(abandoned);
        self.thread.join().unwrap_or((None, Ended::Exited))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> HttpsClient {
        HttpsClient::new(&ClientSettings::new(
            Trust::system(),
            Duration::from_secs(5),
        ))
        .unwrap()
    }

    /// The error reqwest gives for a GET of `url`.
    async fn failed_get(url: &str) -> reqwest::Error {
        client().http().get(url).send().await.unwrap_err()
    }

    #[tokio::test]
    async fn slurmrestd_on_a_port_that_does_not_speak_tls_is_named_and_not_retryable() {
        // Answers whatever arrives in plain HTTP, as slurmrestd without TLS answers a handshake.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let _ = socket.readable().await;
                let _ = socket.try_read(&mut [0u8; 1024]);
                let _ = socket.writable().await;
                let _ = socket.try_write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
            }
        });
        let url = format!("https://127.0.0.1:{port}/slurm/v0.0.40/jobs");
        let error = http_error(&url, &failed_get(&url).await, &client());
        let text = error.to_string();
        assert!(
            text.contains("corrupt message") || text.contains("InvalidContentType"),
            "{text}"
        );
        assert!(!error.retryable(), "{text}");
        assert!(text.contains("retry will not help"), "{text}");
    }

    #[tokio::test]
    async fn a_refused_connection_keeps_its_cause_and_may_be_retried() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/slurm/v0.0.40/jobs");
        let error = http_error(&url, &failed_get(&url).await, &client());
        let text = error.to_string();
        assert!(text.to_lowercase().contains("connection refused"), "{text}");
        assert!(error.retryable(), "{text}");
        assert_eq!(text.matches(&url).count(), 1, "the URL once: {text}");
    }
}
