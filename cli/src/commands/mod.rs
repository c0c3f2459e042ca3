//! One module per subcommand. Each exposes an `Args` struct (clap) and a `run` function.

pub(crate) mod ca;
pub(crate) mod check;
pub(crate) mod demo;
pub(crate) mod demo_repair;
pub(crate) mod explore;
pub(crate) mod har;
pub(crate) mod instrument;
pub(crate) mod policy;
pub(crate) mod proxy;
pub(crate) mod races;
pub(crate) mod trace;
