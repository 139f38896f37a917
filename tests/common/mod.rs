//! Helpers shared by integration tests.

#![allow(dead_code)]

pub mod elem_oracle;
pub mod itl;
pub mod oracle;
pub mod rng;
