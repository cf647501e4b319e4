//! How the binary is linked. Each hook is a process of its own, started many times a session,
//! so what the dynamic loader does before `main` counts (docs/performance.md, "Before `main`").

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if packed_relocations_run_here() {
        // The binary stays position-independent; its 18,000-odd relative relocations take a
        // few kilobytes instead of 450, which the loader no longer reads page by page.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether a binary with packed relative relocations (`DT_RELR`) runs where this one is built
/// to run: Linux with glibc 2.36 or later, built on the machine itself. An older glibc refuses
/// to start such a binary, so a cross build, or a glibc this cannot tell, links as before.
fn packed_relocations_run_here() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
    {
        return false;
    }
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut numbers = version.split('.').map(|n| n.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (2, 36),
        _ => false,
    }
}
