//! The real agents' command-line clients, pinned, from npm: installed on first use into
//! `<target>/<folder>/` (where `.ci/run`'s test run puts them too), each test process sharing
//! the one install.
//!
//! A test starts with `let Some(bin) = npm::binary(&CODEX) else { return };`: when the client
//! cannot be had (no npm, no network) it prints `skipped: …` and the test passes without it —
//! unless `$AGENT_CONTEXT_TESTS_NEED_CLIENTS` is set (CI sets it), and then it fails.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};
use std::{env, fs, io};

/// A pinned npm package and the program it brings.
pub struct Package {
    /// The npm package.
    pub name: &'static str,
    pub version: &'static str,
    /// The folder under the target folder it is installed in.
    pub folder: &'static str,
    /// The program in `node_modules/.bin`.
    pub bin: &'static str,
    /// A variable naming a binary to use instead.
    pub env_bin: &'static str,
    /// A script of the package to run with node when its install script did not run (an npm
    /// that skips them), relative to `node_modules`.
    pub postinstall: Option<&'static str>,
}

pub const CLAUDE_CODE: Package = Package {
    name: "@anthropic-ai/claude-code",
    version: "2.1.330",
    folder: "claude-code",
    bin: "claude",
    env_bin: "CLAUDE_CODE_BIN",
    postinstall: Some("@anthropic-ai/claude-code/install.cjs"),
};

pub const CODEX: Package = Package {
    name: "@openai/codex",
    version: "0.169.0",
    folder: "codex-cli",
    bin: "codex",
    env_bin: "CODEX_CLI_BIN",
    postinstall: None,
};

pub const GEMINI: Package = Package {
    name: "@google/gemini-cli",
    version: "0.61.0",
    folder: "gemini-cli",
    bin: "gemini",
    env_bin: "GEMINI_CLI_BIN",
    postinstall: None,
};

/// The package's program, installed if need be; `None` (after saying why) when it cannot be
/// had and the environment does not need it.
pub fn binary(package: &'static Package) -> Option<PathBuf> {
    static FOUND: OnceLock<Mutex<HashMap<&'static str, Result<PathBuf, String>>>> = OnceLock::new();
    let found = FOUND.get_or_init(Default::default);
    // One install at a time in this process; other processes are kept apart by the renames.
    let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
    let result = found
        .entry(package.name)
        .or_insert_with(|| find_or_install(package))
        .clone();
    let what = format!("{} {}", package.name, package.version);
    match result {
        Ok(bin) => Some(bin),
        Err(why) if env::var_os("AGENT_CONTEXT_TESTS_NEED_CLIENTS").is_some() => {
            panic!("{what} could not be installed: {why}")
        }
        Err(why) => {
            eprintln!("skipped: {what} could not be installed: {why}");
            None
        }
    }
}

fn find_or_install(package: &Package) -> Result<PathBuf, String> {
    if let Some(bin) = env::var_os(package.env_bin) {
        let bin = PathBuf::from(bin);
        if !reports(&bin, package.version)? {
            eprintln!(
                "note: {} is not {} {}",
                package.env_bin, package.name, package.version
            );
        }
        return Ok(bin);
    }
    let cache = target_dir().join(package.folder);
    let bin = cache.join("node_modules/.bin").join(package.bin);
    if reports(&bin, package.version).unwrap_or(false) {
        return Ok(bin);
    }
    install(package, &cache)?;
    Ok(bin)
}

/// `<CARGO_TARGET_DIR or target>`.
fn target_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    env::var_os("CARGO_TARGET_DIR")
        .map(|dir| manifest.join(dir))
        .unwrap_or_else(|| manifest.join("target"))
}

/// Whether `bin --version` runs and names `version`.
fn reports(bin: &Path, version: &str) -> Result<bool, String> {
    let out = Command::new(bin)
        .arg("--version")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{} does not run: {e}", bin.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} --version failed: {}",
            bin.display(),
            last_line(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ok(stdout.split_whitespace().any(|word| word == version))
}

/// npm-install the pinned package into a fresh sibling folder, then rename it into place: an
/// interrupted install leaves only a `<folder>.partial-*` folder, never a half cache.
fn install(package: &Package, cache: &Path) -> Result<(), String> {
    let parent = cache.parent().unwrap();
    fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let partial_prefix = format!("{}.partial-", package.folder);
    remove_stale_partials(parent, &partial_prefix);
    let partial = tempfile::Builder::new()
        .prefix(&partial_prefix)
        .tempdir_in(parent)
        .map_err(|e| format!("cannot create a folder in {}: {e}", parent.display()))?;
    let spec = format!("{}@{}", package.name, package.version);
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(partial.path())
        .arg(&spec)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => "npm is not on PATH".to_owned(),
            _ => format!("npm does not run: {e}"),
        })?;
    if !out.status.success() {
        return Err(format!("npm install {spec}: {}", last_line(&out.stderr)));
    }
    let bin = partial.path().join("node_modules/.bin").join(package.bin);
    if let Some(script) = package.postinstall
        && reports(&bin, package.version).is_err()
    {
        // The package's install script puts the native binary in place of a stub; an npm that
        // skips install scripts leaves the stub, which tells us to run it by hand.
        let _ = Command::new("node")
            .arg(partial.path().join("node_modules").join(script))
            .current_dir(partial.path())
            .stdin(Stdio::null())
            .output();
    }
    if !reports(&bin, package.version)? {
        return Err(format!(
            "npm installed another version than {}",
            package.version
        ));
    }
    let installed = cache.join("node_modules/.bin").join(package.bin);
    if reports(&installed, package.version).unwrap_or(false) {
        return Ok(()); // another test process got there first
    }
    if cache.exists() {
        let old = parent.join(format!("{}.old-{}", package.folder, std::process::id()));
        fs::rename(cache, &old).map_err(|e| format!("cannot move {}: {e}", cache.display()))?;
        let _ = fs::remove_dir_all(old);
    }
    let done = partial.keep();
    fs::rename(&done, cache).map_err(|e| {
        let _ = fs::remove_dir_all(&done);
        format!("cannot rename the install to {}: {e}", cache.display())
    })
}

/// Partial installs over an hour old were interrupted; younger ones may still be running.
fn remove_stale_partials(parent: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stale = entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| {
            SystemTime::now()
                .duration_since(t)
                .is_ok_and(|age| age > Duration::from_secs(3600))
        });
        if name.to_string_lossy().starts_with(prefix) && stale {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

pub fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().find(|l| !l.trim().is_empty());
    line.unwrap_or("no output").trim().to_owned()
}
