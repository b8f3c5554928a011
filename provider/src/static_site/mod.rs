//! The static provider: a whole site described in the configuration file. For bare-metal GPU nodes,
//! or middleware accelfed does not query yet. `config.rs` is the file format, `validate.rs` checks it
//! hangs together, `map.rs` builds the GLUE2 services (pure).

mod config;
mod map;
mod validate;

pub use config::{
    BatchConfig, BatchShareConfig, CloudConfig, EndpointConfig, FlavorConfig, GpuConfig,
    ImageConfig, NodeTypeConfig, OsConfig, ProjectConfig, StaticConfig, VoConfig,
};
pub use validate::Problem;
