//! The integration tests: one binary, one module per area, all through the real binary in
//! real git repositories (see `repo::TestRepo`).

mod classifier;
mod claude_client;
mod claude_code;
mod claude_hooks;
mod claude_md;
mod completions;
mod config;
mod corrupt;
mod crash;
mod demo;
mod distill;
mod doctor;
mod extract;
mod forget;
mod git_hooks;
mod graph;
mod import;
mod install;
mod link;
mod load;
mod man;
mod mcp;
mod notes;
mod ownership;
mod pager;
mod query;
mod races;
mod record;
mod redaction;
mod repo;
mod review;
mod scenario;
mod shapes;
mod untrusted;
mod why;
