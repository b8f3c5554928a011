//! `accelfed validate`: parse and check a configuration, contacting nothing.

use accelfed_provider::config::Config;

use crate::args::ValidateArgs;
use crate::exit::Outcome;

pub fn run(args: &ValidateArgs) -> Outcome {
    match Config::load(&args.config) {
        Ok(loaded) => {
            let providers: Vec<&str> = loaded.config.providers().iter().map(|p| p.name()).collect();
            eprintln!(
                "{}: valid (site {}, providers: {})",
                args.config.display(),
                loaded.config.site.name,
                if providers.is_empty() {
                    "none".to_owned()
                } else {
                    providers.join(", ")
                }
            );
            Outcome::Ok
        }
        Err(err) => {
            eprintln!("error: {err}");
            Outcome::Config
        }
    }
}
