//! A private OpenLDAP server for tests: the real slapd with the official GLUE 2.0 schema (Debian
//! `glue-schema`), on 127.0.0.1, a free port and a temp dir, gone when the value is dropped.
//!
//! ```no_run
//! use accelfed_testkit::slapd::Slapd;
//! let slapd = Slapd::start(&[]).expect("slapd starts");
//! let report = slapd.load_ldif(b"dn: GLUE2GroupID=resource,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: resource\n")
//!     .expect("ldapadd ran");
//! assert_eq!(report.rejected, 0, "{report}");
//! let found = slapd.search("o=glue", "(objectClass=GLUE2Group)", &["GLUE2GroupID"]).expect("search");
//! assert_eq!(found[0].dn, "GLUE2GroupID=resource,o=glue");
//! ```
//!
//! Loading goes through `ldapadd -c` (what an operator would run), so a rejection reads exactly as
//! it would on a BDII; searching goes through the `ldap3` crate. When slapd or the schema are
//! missing the harness installs them with apt-get, except under `CI=true`, where a missing
//! component is a failure that says what to install (never a skip).

mod config;
mod install;
mod ldaps;
mod load;
mod update;

use std::collections::HashMap;
use std::fs::File;
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ldap3::{LdapConn, Scope, SearchEntry};
use tempfile::TempDir;

use crate::owned::OwnedProcess;
use crate::port::ReservedPort;

pub use ldaps::ldaps_front;
pub use load::LoadReport;
pub use update::{LdifEntry, LdifError, UpdateReport, parse_ldif};

/// The DN and password the harness binds with (the rootdn: no ACLs get in the way).
pub const ROOT_DN: &str = "cn=admin,o=glue";
pub const ROOT_PW: &str = "secret";
/// The suffix, as a BDII has it.
pub const SUFFIX: &str = "o=glue";

/// How long slapd gets to answer after start.
const READY_TIMEOUT: Duration = Duration::from_secs(15);

/// What can go wrong; every message names the server or tool involved.
#[derive(Debug, thiserror::Error)]
pub enum SlapdError {
    #[error(
        "{what} is missing ({path}) and CI=true, so the harness does not install it: \
         apt-get install -y slapd ldap-utils glue-schema"
    )]
    Missing { what: &'static str, path: PathBuf },
    #[error("{what} is missing ({path}) and installing it failed: {detail}")]
    Install {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    #[error("{action}: {source}")]
    Io {
        action: String,
        source: std::io::Error,
    },
    #[error("slapd did not start on {url}: {reason}\n--- slapd log ({log_path}) ---\n{log}")]
    Start {
        url: String,
        reason: String,
        log_path: PathBuf,
        log: String,
    },
    #[error("LDAP {action} on {url} failed: {source}")]
    Ldap {
        action: String,
        url: String,
        /// Boxed: ldap3's error is large, and every `Result` here would carry its size.
        source: Box<ldap3::LdapError>,
    },
    #[error("{tool} against {url} failed (exit {status}): {output}")]
    Tool {
        tool: &'static str,
        url: String,
        status: String,
        output: String,
    },
}

pub type Result<T> = std::result::Result<T, SlapdError>;

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> SlapdError {
    let action = action.into();
    move |source| SlapdError::Io { action, source }
}

/// One entry found by [`Slapd::search`]; attribute names as the server spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub dn: String,
    pub attrs: HashMap<String, Vec<String>>,
}

impl Found {
    /// The first value of `name` (attribute names compare case-insensitively, as in LDAP).
    pub fn first(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .and_then(|(_, values)| values.first())
            .map(String::as_str)
    }
}

/// A running private slapd. Dropping it stops the server and removes its directory.
#[derive(Debug)]
pub struct Slapd {
    child: OwnedProcess,
    url: String,
    dir: TempDir,
}

impl Slapd {
    /// Starts slapd with core, cosine, GLUE20.schema and `extra_schemas` (in that order), waits
    /// until it answers, and creates `o=glue`.
    pub fn start(extra_schemas: &[&Path]) -> Result<Self> {
        install::ensure_installed()?;
        for schema in extra_schemas {
            if !schema.is_file() {
                return Err(SlapdError::Io {
                    action: format!("reading schema {}", schema.display()),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                });
            }
        }
        // slapd takes no bound socket from its parent and prints no port it chose: its port is
        // reserved until it answers (crate::port), so no other process can take it in between.
        // A start that fails for another reason (a slow machine) is tried again.
        let mut last_error = None;
        for _ in 0..3 {
            match Self::start_once(extra_schemas) {
                Ok(slapd) => return Ok(slapd),
                Err(err) => last_error = Some(err),
            }
        }
        Err(last_error.unwrap_or_else(|| SlapdError::Start {
            url: String::new(),
            reason: "no attempt made".into(),
            log_path: PathBuf::new(),
            log: String::new(),
        }))
    }

    fn start_once(extra_schemas: &[&Path]) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("accelfed-slapd.")
            .tempdir()
            .map_err(io("creating a temp dir"))?;
        let reserved = ReservedPort::new().map_err(io("reserving a port"))?;
        let port = reserved.port();
        let url = format!("ldap://127.0.0.1:{port}/");
        let conf = config::write(dir.path(), extra_schemas)?;
        let log_path = dir.path().join("slapd.log");
        let log =
            File::create(&log_path).map_err(io(format!("creating {}", log_path.display())))?;
        let log_err = log.try_clone().map_err(io("duplicating the log handle"))?;
        // `-d 0` keeps slapd in the foreground, so the harness owns the process and its exit.
        let mut command = Command::new(install::SLAPD);
        command
            .arg("-f")
            .arg(&conf)
            .arg("-h")
            .arg(&url)
            .args(["-d", "0"])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        let child = OwnedProcess::spawn("slapd", &mut command)
            .map_err(io(format!("running {}", install::SLAPD)))?;
        let mut slapd = Slapd { child, url, dir };
        slapd.wait_ready(port)?;
        drop(reserved);
        slapd.create_suffix()?;
        Ok(slapd)
    }

    /// `ldap://127.0.0.1:<port>/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's directory (config, database, log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// slapd's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("slapd.log")).unwrap_or_default()
    }

    fn start_error(&self, reason: String) -> SlapdError {
        SlapdError::Start {
            url: self.url.clone(),
            reason,
            log_path: self.dir.path().join("slapd.log"),
            log: self.log(),
        }
    }

    fn wait_ready(&mut self, port: u16) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.start_error(format!("slapd exited with {status}")));
            }
            if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() && self.connect().is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(self.start_error(format!("no answer within {READY_TIMEOUT:?}")));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A connection bound as the rootdn.
    pub fn connect(&self) -> Result<LdapConn> {
        let ldap_error = |action: &str| {
            let url = self.url.clone();
            let action = action.to_owned();
            move |source| SlapdError::Ldap {
                action,
                url,
                source: Box::new(source),
            }
        };
        let mut ldap = LdapConn::new(&self.url).map_err(ldap_error("connect"))?;
        ldap.simple_bind(ROOT_DN, ROOT_PW)
            .and_then(|result| result.success())
            .map_err(ldap_error(&format!("bind as {ROOT_DN}")))?;
        Ok(ldap)
    }

    fn create_suffix(&self) -> Result<()> {
        let mut ldap = self.connect()?;
        let attrs = vec![
            ("objectClass", ["organization"].into_iter().collect()),
            ("o", ["glue"].into_iter().collect()),
        ];
        ldap.add(SUFFIX, attrs)
            .and_then(|result| result.success())
            .map_err(|source| SlapdError::Ldap {
                action: format!("add {SUFFIX}"),
                url: self.url.clone(),
                source: Box::new(source),
            })?;
        Ok(())
    }

    /// Loads `ldif` with `ldapadd -c` (going on after a rejected entry) and reports what was
    /// loaded and what was rejected, with the server's reasons.
    pub fn load_ldif(&self, ldif: &[u8]) -> Result<LoadReport> {
        load::ldapadd(self, ldif)
    }

    /// Searches the subtree under `base`; `attrs` empty means all user attributes.
    pub fn search(&self, base: &str, filter: &str, attrs: &[&str]) -> Result<Vec<Found>> {
        let mut ldap = self.connect()?;
        let attrs: Vec<&str> = if attrs.is_empty() {
            vec!["*"]
        } else {
            attrs.to_vec()
        };
        let (entries, _) = ldap
            .search(base, Scope::Subtree, filter, attrs)
            .and_then(|result| result.success())
            .map_err(|source| SlapdError::Ldap {
                action: format!("search {filter} under {base}"),
                url: self.url.clone(),
                source: Box::new(source),
            })?;
        Ok(entries
            .into_iter()
            .map(SearchEntry::construct)
            .map(|entry| Found {
                dn: entry.dn,
                attrs: entry.attrs,
            })
            .collect())
    }
}

impl Drop for Slapd {
    fn drop(&mut self) {
        // The database is throw-away, so no graceful shutdown is needed; the group is killed and
        // reaped before TempDir removes the directory under it.
        self.child.kill();
    }
}
