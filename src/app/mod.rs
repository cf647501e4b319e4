//! Whole operations, between the command line and the library (the part gitoxide-core plays
//! for gitoxide): `cli/` parses, calls one of these or a library function, and renders what
//! it returns; the hooks' watchdog and output stay at the edge, in `cli/`.

pub mod forget;
pub mod git_events;
pub mod install;

/// `path` shown relative to the home folder when it is under it.
pub fn display_path(path: &std::path::Path) -> String {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}
