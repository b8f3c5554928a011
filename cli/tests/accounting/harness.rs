//! Real processes for the accounting pipeline: a test CA and server certificate (rcgen), an
//! `accelfed serve` on a free port of 127.0.0.1, and site folders with a site.toml, a token and a
//! manual-usage file for `accelfed meter` (the test meter) and `accelfed ship`.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub fn accelfed() -> Command {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
}

pub fn run(args: &[&str]) -> Output {
    accelfed().args(args).output().unwrap()
}

pub fn status(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A CA and a server certificate for `localhost` and 127.0.0.1, as PEM files in `dir`.
pub struct Pki {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub fn pki(dir: &Path) -> Pki {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "accelfed test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    let pki = Pki {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    };
    std::fs::write(&pki.ca, ca_cert.pem()).unwrap();
    std::fs::write(&pki.cert, cert.pem()).unwrap();
    std::fs::write(&pki.key, key.serialize_pem()).unwrap();
    pki
}

pub const TOKEN_A: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
pub const TOKEN_B: &str = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";

fn sha256_hex(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes central.toml for `database` (`path = ...` or `url = ...` line) listening on `grpc`.
pub fn central_config(dir: &Path, pki: &Pki, database: &str, grpc: &str) -> PathBuf {
    let path = dir.join("central.toml");
    std::fs::write(
        &path,
        format!(
            "[listen]\ngrpc = \"{grpc}\"\nmetrics = \"127.0.0.1:0\"\n\n\
             [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n\
             [database]\n{database}\n\n[ingest]\nmax_batch = 1000\n\n\
             [sites.SITE-A]\ntoken_sha256 = \"{}\"\n\n[sites.SITE-B]\ntoken_sha256 = \"{}\"\n",
            pki.cert.display(),
            pki.key.display(),
            sha256_hex(TOKEN_A),
            sha256_hex(TOKEN_B),
        ),
    )
    .unwrap();
    path
}

/// A running `accelfed serve`, stopped (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    pub grpc: SocketAddr,
    pub metrics: SocketAddr,
    /// The server's log lines; kept so the reader thread keeps draining its standard error.
    _log: mpsc::Receiver<String>,
}

impl Server {
    pub fn start(config: &Path) -> Server {
        let mut child = accelfed()
            .args(["serve", "--config"])
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut grpc = None;
        let mut metrics = None;
        let mut seen = Vec::new();
        while grpc.is_none() || metrics.is_none() {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    if let Some(address) = line.strip_prefix("listening grpc ") {
                        grpc = Some(address.parse().unwrap());
                    }
                    if let Some(address) = line.strip_prefix("listening metrics ") {
                        metrics = Some(address.parse().unwrap());
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!("accelfed serve did not start:\n{}", seen.join("\n"));
                }
            }
        }
        Server {
            child,
            grpc: grpc.unwrap(),
            metrics: metrics.unwrap(),
            _log: rx,
        }
    }

    pub fn endpoint(&self) -> String {
        format!("https://localhost:{}", self.grpc.port())
    }

    /// The service's resident memory in KiB, from /proc.
    pub fn resident_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// `GET /metrics`, by hand over a TCP socket (HTTP/1.0, no client library needed).
    pub fn metrics(&self) -> String {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(self.metrics).unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One site's folder: site.toml, token file and manual usage.
pub struct Site {
    pub config: PathBuf,
    pub spool: PathBuf,
}

/// Writes a site folder for `name` shipping to `endpoint` with `token`.
pub fn site(
    dir: &Path,
    name: &str,
    endpoint: &str,
    token: &str,
    pki: &Pki,
    usage: &str,
    extra_ship: &str,
) -> Site {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("token"), format!("{token}\n")).unwrap();
    std::fs::write(dir.join("usage.jsonl"), usage).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"{name}\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
             observations = \"usage.jsonl\"\n\n[accounting.ship]\nendpoint = \"{endpoint}\"\n\
             token_file = \"token\"\nca = \"{}\"\nbatch_size = 3\nattempts = 2\n\
             backoff_initial_ms = 50\nbackoff_max_ms = 200\ntimeout_s = 10\n{extra_ship}",
            pki.ca.display()
        ),
    )
    .unwrap();
    Site {
        spool: dir.join("spool.sqlite"),
        config,
    }
}

impl Site {
    pub fn meter(&self) -> Output {
        accelfed()
            .args(["meter", "--since", "2025-12-01", "--config"])
            .arg(&self.config)
            .output()
            .unwrap()
    }

    pub fn ship(&self, verify: bool) -> Output {
        let mut command = accelfed();
        command.arg("ship").arg("--config").arg(&self.config);
        if verify {
            command.arg("--verify");
        }
        command.output().unwrap()
    }

    pub fn spool_depth(&self) -> u64 {
        accelfed_accounting::spool::Spool::open(&self.spool)
            .unwrap()
            .depth()
            .unwrap()
    }
}

/// The GPU-hours per VO that `accelfed report --by vo --format json` prints for `database`.
pub fn report_by_vo(database: &str) -> (Vec<(String, f64, u64)>, f64) {
    let output = run(&[
        "report",
        "--by",
        "vo",
        "--format",
        "json",
        "--database",
        database,
    ]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = value["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["vo"].as_str().unwrap_or("").to_owned(),
                row["gpu_hours"].as_f64().unwrap(),
                row["records"].as_u64().unwrap(),
            )
        })
        .collect();
    (rows, value["total"]["gpu_hours"].as_f64().unwrap())
}
