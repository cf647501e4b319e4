//! Packing what we wrote. Our objects are written one file each (loose), as git's own
//! commands write theirs, and git leaves them so until its own `gc --auto`, at about 6,700. A
//! command that writes — an import, `extract`, a sync, a rebuild — and the process an agent's
//! commit leaves its work to pack the repository's loose objects once there are many
//! ([`pack_if_loose`]): an import of hundreds of sessions leaves one pack rather than thousands
//! of files, and the hooks, which read the newest objects most, do not pay for a file opened,
//! mapped and inflated for each (docs/performance.md).
//!
//! The same processes write git's commit-graph where the repository has none, or where it
//! lacks many of the commits the hooks walk ([`commit_graph_if_behind`]), as `git maintenance`
//! would: a clone has none until then, a fetch adds none to it, and the hooks' walks of the
//! history read each commit it lacks from its pack.

use std::fs;
use std::process::{Command, Stdio};

use super::{Error, Result, Store, history};

/// New loose objects past which we pack them.
pub const PACK_AFTER: usize = 256;

/// How many loose objects the repository has: the files of `objects/<xx>/`.
fn loose(store: &Store) -> usize {
    let objects = store.common_dir().join("objects");
    let Ok(entries) = fs::read_dir(&objects) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit())
        })
        .map(|e| fs::read_dir(e.path()).map_or(0, |files| files.count()))
        .sum()
}

/// Pack the repository's loose objects, whoever wrote them, when there are [`PACK_AFTER`] more
/// than the last such packing left (`loose-after-pack` in the store: objects no ref reaches,
/// which `git repack -d` leaves loose), unless `gc.auto` is 0 or less or `maintenance.auto`
/// false (the user's word that nothing packs on its own): git's own `gc --auto` waits for about
/// 6,700. Nothing is done where the store does not exist. Whether it packed.
pub fn pack_if_loose(store: &Store) -> Result<bool> {
    let repo = store.repo();
    // Nothing of ours was written where there is no store, and none is made for the count.
    if !packing_on(&repo.config_snapshot()) || !store.exists() {
        return Ok(false);
    }
    let left_path = store.dir().join(LEFT_AFTER_PACK);
    let left = fs::read_to_string(&left_path)
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(0);
    // A count that cannot be kept makes the next run count from what it kept before, or 0:
    // it may pack sooner or later than it should, which is no failure.
    let keep = |count: usize| {
        let _ = super::write_cache(&left_path, format!("{count}\n").as_bytes());
    };
    let now = loose(store);
    if now < left + PACK_AFTER {
        if now < left {
            // git packed or pruned them since: new ones count from here.
            keep(now);
        }
        return Ok(false);
    }
    repack(store)?;
    keep(loose(store));
    Ok(true)
}

/// The file in the store that keeps how many loose objects the last [`pack_if_loose`] left.
const LEFT_AFTER_PACK: &str = "loose-after-pack";

/// `git repack -d`: the loose objects only, into one new pack, the packs already there left as
/// they are.
fn repack(store: &Store) -> Result<()> {
    git(store, &["repack", "-d", "-q", "--no-write-bitmap-index"])
}

/// Whether the user's configuration lets things pack on their own: not when `gc.auto` is 0 or
/// less (git's "never") or `maintenance.auto` false.
fn packing_on(config: &gix::config::Snapshot<'_>) -> bool {
    !(config.integer("gc.auto").is_some_and(|n| n <= 0)
        || config.boolean("maintenance.auto") == Some(false))
}

/// Commits of HEAD's and the default branch's histories missing from git's commit-graph past
/// which it is written again.
const GRAPH_BEHIND: usize = 100;

/// Write git's commit-graph (`git commit-graph write --reachable --split`, a layer over those
/// there) when the repository has none, or when HEAD's and the default branch's histories (what
/// the brief walks) have a hundred commits or more that it lacks, as `git maintenance` would;
/// not when nothing is to pack on its own (as for [`pack_if_loose`]), git is told not to use or
/// write one (`core.commitGraph`, `gc.writeCommitGraph` false), the clone is shallow (git uses
/// none there) or has no commit yet, nor again for one git does not use (replace refs) or
/// cannot read (left for git to mend). Nothing is done where the store does not exist. Whether
/// it wrote one.
pub fn commit_graph_if_behind(store: &Store) -> Result<bool> {
    let repo = store.repo();
    let config = repo.config_snapshot();
    let declined = config.boolean("core.commitGraph") == Some(false)
        || config.boolean("gc.writeCommitGraph") == Some(false);
    // A shallow clone's, git does not use.
    if !packing_on(&config) || declined || !store.exists() || repo.is_shallow().unwrap_or(true) {
        return Ok(false);
    }
    // Without a commit yet, nothing to write.
    let tips = tips(&repo);
    if tips.is_empty() {
        return Ok(false);
    }
    let info = store.common_dir().join("objects/info");
    let chain = info.join("commit-graphs/commit-graph-chain");
    let before = fs::read(&chain).ok();
    let behind = before.is_none() && !info.join("commit-graph").exists()
        // One git does not use (replace refs, grafts) is not written again and again.
        || repo.commit_graph_if_enabled().ok().flatten().is_some_and(|graph| {
            lacks(&repo, &graph, tips, GRAPH_BEHIND) >= GRAPH_BEHIND
        });
    if !behind {
        return Ok(false);
    }
    git(store, &["commit-graph", "write", "--reachable", "--split"])?;
    // git writes none where it would not use one (grafts), and says nothing.
    Ok(fs::read(&chain)
        .ok()
        .is_some_and(|after| Some(&after) != before.as_ref()))
}

/// HEAD and the default branch's tip: where the brief's walks start.
fn tips(repo: &gix::Repository) -> Vec<gix::ObjectId> {
    (repo.head_id().ok().map(|id| id.detach()))
        .into_iter()
        .chain(history::default_tip(repo).map(|(tip, _)| tip))
        .collect()
}

/// How many commits of the histories of `tips` `graph` lacks, counted up to `most`: from each
/// tip, through the parents of each commit it lacks.
fn lacks(
    repo: &gix::Repository,
    graph: &gix::commitgraph::Graph,
    tips: Vec<gix::ObjectId>,
    most: usize,
) -> usize {
    let mut queue = tips;
    let mut seen = std::collections::HashSet::new();
    let mut lacked = 0;
    while let Some(id) = queue.pop() {
        if lacked >= most {
            break;
        }
        if !seen.insert(id) || graph.commit_by_id(id).is_some() {
            continue;
        }
        lacked += 1;
        if let Ok(commit) = repo.find_commit(id) {
            queue.extend(commit.parent_ids().map(|p| p.detach()));
        }
    }
    lacked
}

/// Run `git <args>` on the repository, quietly; its error output is the failure.
fn git(store: &Store, args: &[&str]) -> Result<()> {
    let what = format!("git {}", args[0]);
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(store.common_dir())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::git(format!("run {what}"), e.to_string()))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(Error::git(
            what,
            String::from_utf8_lossy(&out.stderr).trim(),
        )),
    }
}
