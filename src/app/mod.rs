//! Whole operations, between the command line and the library (the part gitoxide-core plays
//! for gitoxide): `cli/` parses, calls one of these or a library function, and renders what
//! it returns; the hooks' watchdog and output stay at the edge, in `cli/`.

pub mod forget;
pub mod git_events;
