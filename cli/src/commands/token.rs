//! `accelfed token`: a new random site token and the line that lets the central service accept it.

use accelfed_central::auth::{TokenHash, new_token};
use accelfed_schemas::names::SiteName;

use crate::args::TokenArgs;
use crate::exit::Outcome;

pub fn run(args: &TokenArgs) -> Outcome {
    let site = match SiteName::new(args.site.as_str()) {
        Ok(site) => site,
        Err(err) => {
            eprintln!("error: --site: {err}");
            return Outcome::Config;
        }
    };
    let token = match new_token() {
        Ok(token) => token,
        Err(err) => {
            eprintln!("error: no randomness from the operating system: {err}");
            return Outcome::Partial;
        }
    };
    eprintln!(
        "# add to central.toml:\n[sites.{}]\ntoken_sha256 = \"{}\"",
        toml_key(site.as_str()),
        TokenHash::of(&token).to_hex()
    );
    println!("{token}");
    Outcome::Ok
}

fn toml_key(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        name.to_owned()
    } else {
        format!("{name:?}")
    }
}
