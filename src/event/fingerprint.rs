//! The lines a change adds, as hashes: how a commit is known to carry a session's edits
//! whatever its dates — rebased, amended by hand, made the next day, squashed
//! (docs/linking.md, "The signals, in order of trust").
//!
//! A line's hash is the low 32 bits of XXH3-64 of the line trimmed, with each run of
//! whitespace made one space (a formatter that realigns a line does not hide it). Lines with
//! fewer than [`LINE_MIN`] characters so counted, or without a letter or digit, tell nothing
//! (`}`, `end`, blank lines) and have none. A write event waiting in the pending queue keeps
//! the hashes of its file's added lines (the [`KEPT_MAX`] smallest), so that a commit holding
//! a few of them is found; in a note it keeps a sample, the [`SAMPLE_MAX`] smallest, so that
//! any two samples of the same lines agree.

use std::collections::BTreeSet;

/// How many hashes a pending write event keeps, at most.
pub const KEPT_MAX: usize = 256;

/// How many hashes a write event keeps in a note, at most.
pub const SAMPLE_MAX: usize = 24;

/// The shortest line (in characters, whitespace runs counted once) that has a hash.
pub const LINE_MIN: usize = 10;

/// The hash of `line`, unless it is too short or too plain to tell anything: of its words
/// joined by one space, fed to the hasher as they come (no copy of the line is made).
pub fn hash(line: &str) -> Option<u32> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let (mut chars, mut telling) = (0, false);
    for word in line.split_whitespace() {
        if chars > 0 {
            hasher.update(b" ");
            chars += 1;
        }
        hasher.update(word.as_bytes());
        chars += word.chars().count();
        telling = telling || word.chars().any(char::is_alphanumeric);
    }
    if chars < LINE_MIN || !telling {
        return None;
    }
    Some(hasher.digest() as u32)
}

/// The hashes of the lines of `text`.
pub fn hashes(text: &str) -> BTreeSet<u32> {
    text.lines().filter_map(hash).collect()
}

/// The hashes of the lines of `new` that `old` does not have: what replacing `old` with `new`
/// adds.
pub fn added(old: &str, new: &str) -> BTreeSet<u32> {
    let before = hashes(old);
    hashes(new)
        .into_iter()
        .filter(|h| !before.contains(h))
        .collect()
}

/// The `most` smallest of `hashes`, in order: [`KEPT_MAX`] for a pending event, [`SAMPLE_MAX`]
/// for a note.
pub fn smallest(hashes: impl IntoIterator<Item = u32>, most: usize) -> Vec<u32> {
    let all: BTreeSet<u32> = hashes.into_iter().collect();
    all.into_iter().take(most).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_have_no_hash_and_spacing_does_not_count() {
        assert_eq!(hash("}"), None);
        assert_eq!(hash("    end"), None);
        assert_eq!(hash("  ----------------  "), None);
        assert_eq!(
            hash("let ttl = Duration::from_secs(30);"),
            hash("\tlet  ttl =   Duration::from_secs(30);  ")
        );
        assert_ne!(
            hash("let ttl = Duration::from_secs(30);"),
            hash("let ttl = 31;")
        );
    }

    #[test]
    fn a_hash_is_that_of_the_words_joined_by_one_space() {
        // Notes keep these hashes: they must not change with how they are computed.
        let joined = "let ttl = Duration::from_secs(30);";
        assert_eq!(
            hash("  let ttl\t=  Duration::from_secs(30);"),
            Some(xxhash_rust::xxh3::xxh3_64(joined.as_bytes()) as u32)
        );
        assert_eq!(
            hash("let ttl = Duration::from_secs(30);"),
            Some(0xc5a8_14ac)
        );
    }

    #[test]
    fn an_edit_adds_the_lines_it_did_not_have() {
        let old = "fn get(&self) -> u32 {\n    self.value + 1\n}\n";
        let new = "fn get(&self) -> u32 {\n    self.value.saturating_add(1)\n}\n";
        let added = added(old, new);
        assert_eq!(added.len(), 1);
        assert!(added.contains(&hash("self.value.saturating_add(1)").unwrap()));
    }

    #[test]
    fn a_sample_is_the_smallest_hashes_whatever_the_order() {
        let text: String = (0..100)
            .map(|i| format!("let value_{i} = {i};\n"))
            .collect();
        let all = hashes(&text);
        let a = smallest(all.iter().copied(), SAMPLE_MAX);
        let b = smallest(all.iter().rev().copied(), SAMPLE_MAX);
        assert_eq!(a, b);
        assert_eq!(a.len(), SAMPLE_MAX);
        assert!(
            a.iter()
                .all(|h| all.iter().take(SAMPLE_MAX).any(|x| x == h))
        );
    }
}
