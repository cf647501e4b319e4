//! What distillation (`crate::distill`) keeps in the store, in `distill/`: for each session,
//! how far each of its transcripts was sent and the tokens it spent (`<session>.json`); for
//! the clone, the calls, tokens and cost of today and of all time, and the last failure
//! (`usage.json`). A file that cannot be read counts as empty: the worst it costs is text sent
//! twice, which the events' ids make harmless.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Error, Result, Store, pending, write_atomic};

pub const DIR: &str = "distill";
const USAGE: &str = "usage.json";

/// One session's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Transcript → the byte offset up to which its text was distilled.
    #[serde(default)]
    pub offsets: BTreeMap<PathBuf, u64>,
    /// Tokens the session's requests used, input and output.
    #[serde(default)]
    pub tokens: u64,
}

/// Calls, tokens and their estimated cost over some time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

impl Spent {
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// The last distillation that failed or was not sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub time: String,
    pub session_id: String,
    pub message: String,
}

/// The clone's usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// The day (`YYYY-MM-DD`, UTC) `today` counts.
    #[serde(default)]
    pub day: String,
    #[serde(default)]
    pub today: Spent,
    #[serde(default)]
    pub total: Spent,
    #[serde(default)]
    pub last_failure: Option<Failure>,
}

impl Usage {
    /// What was spent on `day`.
    pub fn on(&self, day: &str) -> Spent {
        if self.day == day {
            self.today
        } else {
            Spent::default()
        }
    }

    /// Count `spent` on `day`.
    pub fn add(&mut self, day: &str, spent: Spent) {
        if self.day != day {
            self.day = day.to_owned();
            self.today = Spent::default();
        }
        for total in [&mut self.today, &mut self.total] {
            total.calls += spent.calls;
            total.input_tokens += spent.input_tokens;
            total.output_tokens += spent.output_tokens;
            total.cost_usd += spent.cost_usd;
        }
    }
}

/// Where `session`'s progress is kept; its lock file sits beside it.
pub fn progress_path(store: &Store, session: &str, extension: &str) -> PathBuf {
    pending::session_path(store, DIR, session, extension)
}

pub fn progress(store: &Store, session: &str) -> Progress {
    read(progress_path(store, session, "json"))
}

pub fn save_progress(store: &Store, session: &str, progress: &Progress) -> Result<()> {
    write(progress_path(store, session, "json"), progress)
}

/// Hold the usage file until the guard is dropped, waiting for whoever holds it: whoever checks
/// the daily budget keeps it until its spending is counted, so that two sessions cannot both
/// spend the same room.
pub fn lock_usage(store: &Store) -> Result<fs::File> {
    let path = store.dir().join(DIR).join("usage.lock");
    let file = super::lock_file(&path)?;
    file.lock().map_err(super::io_error("cannot lock", &path))?;
    Ok(file)
}

pub fn usage(store: &Store) -> Usage {
    read(store.dir().join(DIR).join(USAGE))
}

pub fn save_usage(store: &Store, usage: &Usage) -> Result<()> {
    write(store.dir().join(DIR).join(USAGE), usage)
}

fn read<T: Default + for<'de> Deserialize<'de>>(path: PathBuf) -> T {
    fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn write<T: Serialize>(path: PathBuf, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|source| Error::Json {
        path: path.clone(),
        source,
    })?;
    write_atomic(&path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_starts_again_each_day_and_the_total_goes_on() {
        let mut usage = Usage::default();
        let call = Spent {
            calls: 1,
            input_tokens: 100,
            output_tokens: 10,
            cost_usd: 0.5,
        };
        usage.add("2026-01-01", call);
        usage.add("2026-01-01", call);
        assert_eq!(usage.on("2026-01-01").tokens(), 220);
        usage.add("2026-01-02", call);
        assert_eq!(usage.on("2026-01-02").calls, 1);
        assert_eq!(
            usage.on("2026-01-01"),
            Spent::default(),
            "not today any more"
        );
        assert_eq!(usage.total.calls, 3);
        assert_eq!(usage.total.cost_usd, 1.5);
    }
}
