//! slurmrestd with JWT on a started cluster, for the provider's REST transport.

use super::*;

/// slurmrestd, where started.
#[derive(Debug, Clone)]
pub struct Rest {
    pub url: String,
    pub user: String,
    pub token_file: PathBuf,
}

impl Slurm {
    /// Starts slurmrestd with JWT on a free port and writes a token for [`REST_USER`].
    pub fn start_rest(&mut self) -> Result<Rest, HarnessError> {
        if let Some(rest) = &self.rest {
            return Ok(rest.clone());
        }
        let reserved = ReservedPort::new().map_err(io("reserving a port"))?;
        let port = reserved.port();
        let listen = format!("127.0.0.1:{port}");
        let log = std::fs::File::create(self.dir().join("log/slurmrestd.out"))
            .map_err(io("creating the slurmrestd log"))?;
        let err = log.try_clone().map_err(io("cloning a log handle"))?;
        let mut command = Command::new("/usr/sbin/slurmrestd");
        command
            .args([
                "-u",
                REST_USER,
                "-g",
                REST_USER,
                "-a",
                "rest_auth/jwt",
                &listen,
            ])
            .env("SLURM_CONF", self.slurm_conf())
            // slurmrestd itself needs no key: tokens are checked by slurmctld and slurmdbd.
            .env("SLURM_JWT", "daemon")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        let daemon =
            OwnedProcess::spawn("slurmrestd", &mut command).map_err(io("starting slurmrestd"))?;
        self.daemons.push(daemon);
        let token = self.run(
            "scontrol",
            &["token", &format!("username={REST_USER}"), "lifespan=3600"],
        )?;
        let token = token
            .trim()
            .strip_prefix("SLURM_JWT=")
            .unwrap_or(token.trim())
            .to_owned();
        let token_file = self.dir().join("rest.jwt");
        std::fs::write(&token_file, token).map_err(io("writing the token file"))?;
        self.wait("slurmrestd", |_| {
            Ok(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok())
        })?;
        drop(reserved);
        let rest = Rest {
            url: format!("http://{listen}"),
            user: REST_USER.to_owned(),
            token_file,
        };
        self.rest = Some(rest.clone());
        Ok(rest)
    }
}
