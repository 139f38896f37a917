//! Tests through the `ivjit` binary and the examples: the CLI, batch formats, `ivjit bench`,
//! `ivjit render`, and the optimization, ray-tracing and root-isolation examples.

#[path = "../common/mod.rs"]
mod common;

mod bench;
mod cli;
mod diagnostics;
mod formats;
mod optimize;
mod outputs;
mod raytrace;
mod render;
mod roots;
