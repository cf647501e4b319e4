//! The config parser (`config::Config::load`): any bytes in `.agent-context.toml` give a
//! configuration or an error, never a panic.
//!
//! When the file is valid, it is also valid as the local file (`config.toml` in the store
//! folder, read by the same rules), and `set_local` — what `switch` uses to change
//! `query.backend` there, keeping the rest of the file — leaves a file that loads, with that
//! key changed and every other setting as it was.
#![no_main]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use git_agent_context::config::{self, Backend, Config, Source};
use libfuzzer_sys::fuzz_target;

/// A working tree and a store folder, made once per fuzzing process.
struct Dirs {
    work: PathBuf,
    store: PathBuf,
}

static DIRS: LazyLock<Dirs> = LazyLock::new(|| {
    let root = std::env::temp_dir().join(format!("gac-fuzz-config-{}", std::process::id()));
    let dirs = Dirs {
        work: root.join("work"),
        store: root.join("store"),
    };
    fs::create_dir_all(&dirs.work).expect("temp dir");
    fs::create_dir_all(&dirs.store).expect("temp dir");
    dirs
});

/// The settings' keys and values, without where they came from.
fn values(config: &Config) -> Vec<(String, String)> {
    config
        .settings()
        .iter()
        .map(|s| (s.key.clone(), s.value.to_string()))
        .collect()
}

fn load_local(store: &Path) -> Result<Config, config::Error> {
    Config::load(None, store)
}

fuzz_target!(|data: &[u8]| {
    let dirs = &*DIRS;
    let local = dirs.store.join(config::LOCAL_FILE);
    let _ = fs::remove_file(&local);
    fs::write(dirs.work.join(config::SHARED_FILE), data).expect("write the shared file");
    let Ok(shared) = Config::load(Some(&dirs.work), &dirs.store) else {
        return;
    };

    fs::write(&local, data).expect("write the local file");
    let before = load_local(&dirs.store).expect("valid as the shared file, valid as the local one");
    assert_eq!(values(&before), values(&shared));
    assert_eq!(before.redact(), shared.redact());

    config::set_local(&dirs.store, "query.backend", "decision").expect("set_local on a valid file");
    let after = match load_local(&dirs.store) {
        Ok(after) => after,
        Err(e) => panic!(
            "set_local left a file that does not load: {e}\n{}",
            fs::read_to_string(&local).unwrap_or_default()
        ),
    };
    assert_eq!(after.backend(), Backend::Decision);
    let backend = after
        .settings()
        .iter()
        .find(|s| s.key == "query.backend")
        .expect("query.backend is a setting");
    assert_eq!(backend.source, Source::File(local.clone()));
    let others = |c: &Config| {
        let mut v = values(c);
        v.retain(|(k, _)| k != "query.backend");
        v
    };
    assert_eq!(
        others(&after),
        others(&before),
        "set_local changed another setting"
    );
    assert_eq!(
        after.redact(),
        before.redact(),
        "set_local changed [redact]"
    );
});
