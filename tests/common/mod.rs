//! Helpers shared by integration tests.

#![allow(dead_code, unused_imports)]

pub mod binary;
pub mod elem_oracle;
pub mod itl;
pub mod oracle;
pub mod rng;
pub mod tools;
