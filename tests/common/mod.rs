//! Helpers shared by integration tests.

#![allow(dead_code)]

pub mod itl;
pub mod oracle;
