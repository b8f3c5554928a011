//! The test federation: central.toml for `SITES` sites on a PostgreSQL database, each site a
//! folder whose site.toml lists the central instances it ships and pushes to, its manual usage
//! (the test meter) and what that usage must add up to in the repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use accelfed_tests::central::{ServeProcess, accelfed, sha256_hex};
use accelfed_tests::pki::PkiFiles;

pub const VOS: [&str; 3] = ["atlas", "cms", "lhcb"];
/// Resources (one record each) per site.
const RESOURCES: u64 = 15;

pub fn name(site: usize) -> String {
    format!("SITE-{site:02}")
}

/// A token of its own per site (64 hex digits).
pub fn token(site: usize) -> String {
    sha256_hex(&format!("token of {}", name(site)))
}

/// central.toml: gRPC, HTTPS and metrics on free ports, the PostgreSQL database at `url`, `sites`
/// sites.
pub fn central_toml(dir: &Path, pki: &PkiFiles, url: &str, sites: usize) -> PathBuf {
    central_toml_with(dir, pki, &format!("url = \"{url}\""), sites)
}

/// [`central_toml`] with `database` the `[database]` table's line (`path = ...` for SQLite).
pub fn central_toml_with(dir: &Path, pki: &PkiFiles, database: &str, sites: usize) -> PathBuf {
    let mut text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n\n\
         [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n[database]\n{database}\n\n\
         [ingest]\nmax_batch = 1000\n\n",
        pki.cert.display(),
        pki.key.display(),
    );
    for site in 0..sites {
        text.push_str(&format!(
            "[sites.{}]\ntoken_sha256 = \"{}\"\n\n",
            name(site),
            sha256_hex(&token(site))
        ));
    }
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// One site's folder.
#[derive(Debug)]
pub struct Site {
    pub index: usize,
    pub dir: PathBuf,
    pub config: PathBuf,
}

/// What the sites' usage adds up to: per VO, (GPU-hours, records).
pub type Expected = BTreeMap<String, (f64, u64)>;

/// Writes site `index`'s folder: it ships to `endpoints` and pushes to `urls`, in that order.
pub fn site(
    parent: &Path,
    index: usize,
    pki: &PkiFiles,
    endpoints: &[String],
    urls: &[String],
    expected: &mut Expected,
) -> Site {
    let dir = parent.join(name(index));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("token"), format!("{}\n", token(index))).unwrap();
    std::fs::write(dir.join("usage.jsonl"), usage(index, 0, expected)).unwrap();
    let list = |items: &[String]| {
        let quoted: Vec<String> = items.iter().map(|item| format!("\"{item}\"")).collect();
        format!("[{}]", quoted.join(", "))
    };
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "{}\n[accounting]\nspool = \"spool.sqlite\"\nobservations = \"usage.jsonl\"\n\n\
             [accounting.ship]\nendpoints = {}\ntoken_file = \"token\"\nca = \"{ca}\"\n\
             batch_size = 2\nin_flight = 2\nattempts = 2\nbackoff_initial_ms = 50\n\
             backoff_max_ms = 200\ntimeout_s = 10\n\n\
             [publish.registry]\nurls = {}\ntoken_file = \"token\"\nca = \"{ca}\"\ntimeout_s = 10\n",
            capacity(index),
            list(endpoints),
            list(urls),
            ca = pki.ca.display(),
        ),
    )
    .unwrap();
    Site { index, dir, config }
}

/// The example site's Slurm cluster under this site's name, with a GPU occupancy of its own, so
/// every site's offers differ.
fn capacity(index: usize) -> String {
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml"),
    )
    .unwrap();
    let cut = example.find("[[static.cloud]]").unwrap();
    let text = example[..cut]
        .replace(
            "name = \"EXAMPLE-GPU\"",
            &format!("name = \"{}\"", name(index)),
        )
        .replace("used = 18 ", &format!("used = {} ", index % 30));
    assert!(text.contains(&name(index)) && !text.contains("[publish"));
    text
}

/// Manual usage: `RESOURCES` resources in January 2026, each one record, its VO, GPUs and hours
/// varying with the site and the round (each round a new version of every record); their sums go
/// into `expected`.
fn usage(index: usize, round: u64, expected: &mut Expected) -> String {
    let mut lines = String::new();
    for resource in 0..RESOURCES {
        let mix = index as u64 + resource;
        let vo = VOS[usize::try_from(mix % 3).unwrap()];
        let (gpus, hours) = (1 + resource % 2, 1 + (mix + round) % 5);
        let start = format!("2026-01-{:02}T00:00:00Z", 2 + resource % 25);
        let end = format!("2026-01-{:02}T{hours:02}:00:00Z", 2 + resource % 25);
        lines.push_str(&format!(
            r#"{{"resource": "node-{resource:03}", "model": "A100", "count": {gpus}, "vo": "{vo}", "start": "{start}", "end": "{end}"}}"#
        ));
        lines.push('\n');
        let entry = expected.entry(vo.to_owned()).or_default();
        entry.0 += (gpus * hours) as f64;
        entry.1 += 1;
    }
    lines
}

impl Site {
    /// Replaces the usage with round `round`'s; what it adds up to goes into `expected`.
    pub fn rewrite_usage(&self, round: u64, expected: &mut Expected) {
        std::fs::write(
            self.dir.join("usage.jsonl"),
            usage(self.index, round, expected),
        )
        .unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = accelfed();
        command.args(args).arg("--config").arg(&self.config);
        command
    }

    /// `accelfed meter`, which must succeed.
    pub fn meter(&self) {
        let output = self
            .command(&["meter", "--since", "2025-12-01"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output));
    }

    /// `accelfed ship` (with `extra` flags), started.
    pub fn start_ship(&self, extra: &[&str]) -> Child {
        let mut args = vec!["ship"];
        args.extend_from_slice(extra);
        spawn(self.command(&args))
    }

    /// `accelfed provide --publish registry` (with `extra` flags), started.
    pub fn start_push(&self, extra: &[&str]) -> Child {
        let mut args = vec!["provide", "--publish", "registry"];
        args.extend_from_slice(extra);
        spawn(self.command(&args))
    }

    /// Records waiting in the spool.
    pub fn spool_depth(&self) -> u64 {
        accelfed_accounting::spool::Spool::open(self.dir.join("spool.sqlite"))
            .unwrap()
            .depth()
            .unwrap()
    }
}

fn spawn(mut command: Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a started command; its output.
pub fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// The exit status and standard error, for messages.
pub fn text(output: &Output) -> String {
    format!(
        "{}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Asserts that `instances` answer `GET /registry/v1/offers` with the same offers (not the same
/// `generated_at`: the instant each answered); how many sites they offer GPUs of.
pub fn same_offers(
    runtime: &tokio::runtime::Runtime,
    instances: [&ServeProcess; 2],
    pki: &PkiFiles,
) -> usize {
    let answers = instances.map(|instance| offers(runtime, instance, pki));
    let [one, other] = answers
        .each_ref()
        .map(|answer| answer["offers"].as_array().unwrap());
    let differing: Vec<(&serde_json::Value, &serde_json::Value)> =
        one.iter().zip(other).filter(|(a, b)| a != b).collect();
    assert!(
        one.len() == other.len() && differing.is_empty(),
        "both instances answer alike: {} and {} offers, {} differ; the first: {:?}",
        one.len(),
        other.len(),
        differing.len(),
        differing.first()
    );
    let sites: std::collections::BTreeSet<&str> = one
        .iter()
        .filter_map(|offer| offer["site"].as_str())
        .collect();
    sites.len()
}

/// `GET /registry/v1/offers` of one instance, as JSON.
fn offers(
    runtime: &tokio::runtime::Runtime,
    instance: &ServeProcess,
    pki: &PkiFiles,
) -> serde_json::Value {
    let ca = std::fs::read(&pki.ca).unwrap();
    let body = runtime
        .block_on(async {
            let client = accelfed_publishers::registry::client(Some(&ca)).unwrap();
            accelfed_publishers::registry::get(&client, &instance.url(), "/registry/v1/offers", &[])
                .await
        })
        .unwrap();
    serde_json::from_str(&body).unwrap()
}
