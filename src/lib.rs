//! git-agent-context: the *why* behind code, kept in git.
//!
//! Claude Code transcripts are read incrementally ([`transcript`]), turned into events
//! ([`classify`], [`event`]), and kept in the repository's git directory ([`store`]) by the
//! [`ingest`] pipeline; [`cli`] is the command line over all of it.

pub mod app;
pub mod classify;
pub mod cli;
pub mod config;
pub mod deliver;
pub mod distill;
pub mod event;
pub mod ingest;
pub mod render;
pub mod retrieve;
pub mod sanitise;
pub mod share;
pub mod store;
pub mod transcript;
