#!/usr/bin/env python3
"""What `sync` pushes, at each `share.level`, measured on a clone with notes (docs/sharing.md).

    eval/share_sizes.py --clone <repository with notes> \
        [--bin target/release/git-agent-context]

For each level, pushes the clone's notes with `sync` to a fresh bare repository and reports the
notes that arrived there: how many, the median and largest note, all of them (bytes as git
stores them, uncompressed), and the pack the push made. Both are compared with the repository's
own pack: what `git pack-objects` makes of every ref but ours (the notes and the graph), the
refs matching `--exclude` left out too (entireio/cli keeps its transcripts on a branch,
`entire/`, which is not code history). The clone's notes themselves (everything, local) are
measured the same way first. The clone is left as it was (its temporary remote is removed).

    eval/share_sizes.py --clone /tmp/link/clone --exclude entire/
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

NOTES = "refs/notes/agent-context"


def git(repo, *args, env=None):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def note_sizes(repo):
    sizes = []
    listed = git(repo, "notes", "--ref", NOTES, "list").split()
    blobs = listed[0::2]
    if not blobs:
        return sizes
    out = subprocess.run(
        ["git", "-C", repo, "cat-file", "--batch-check=%(objectsize)"],
        input="\n".join(blobs) + "\n",
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [int(s) for s in out.split()]


def pack_bytes(repo, loose=True):
    """The objects of a repository, as git counts them: its packs, and its loose objects."""
    fields = dict(
        line.split(": ", 1) for line in git(repo, "count-objects", "-v").splitlines()
    )
    return (int(fields["size-pack"]) + (int(fields["size"]) if loose else 0)) * 1024


def refs_pack_bytes(repo, exclude):
    """The size of a pack of every ref but ours and those matching `exclude`."""
    refs = [
        r
        for r in git(repo, "for-each-ref", "--format=%(refname)").split()
        if not r.startswith(("refs/notes/", "refs/agent-context"))
        and not (exclude and re.search(exclude, r))
    ]
    out = subprocess.run(
        ["git", "-C", repo, "pack-objects", "--revs", "--stdout", "-q"],
        input="\n".join(refs).encode() + b"\n",
        check=True,
        capture_output=True,
    ).stdout
    return len(out)


def describe(name, sizes, packed, pack, whole):
    if not sizes:
        print(f"{name:>10}: no notes")
        return
    total = sum(sizes)
    print(
        f"{name:>10}: {len(sizes)} notes, median {statistics.median(sizes) / 1024:.1f} KB, "
        f"largest {max(sizes) / 1024:.1f} KB, all {total / 1e6:.2f} MB "
        f"({100 * total / pack:.1f}%); packed {packed / 1e6:.2f} MB "
        f"({100 * packed / pack:.2f}%; {100 * packed / whole:.2f}% of the clone's pack)"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clone", required=True)
    parser.add_argument("--bin", default="target/release/git-agent-context")
    parser.add_argument("--exclude", help="a regex: refs that are not the code's history")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    pack = refs_pack_bytes(args.clone, args.exclude)
    whole = pack_bytes(args.clone, loose=False)
    print(
        f"the clone's pack: {whole / 1e6:.1f} MB; a pack of its refs (but ours and "
        f"{args.exclude!r}): {pack / 1e6:.2f} MB, of which the percentages below are"
    )
    with tempfile.TemporaryDirectory() as tmp:
        # Everything, as this clone keeps it: pushed as it is by plain git.
        everything = os.path.join(tmp, "everything.git")
        git(tmp, "init", "-q", "--bare", everything)
        git(args.clone, "push", "-q", everything, f"{NOTES}:{NOTES}")
        describe("local", note_sizes(everything), pack_bytes(everything), pack, whole)
        for level in ["reasoning", "summary"]:
            bare = os.path.join(tmp, f"{level}.git")
            git(tmp, "init", "-q", "--bare", bare)
            remote = f"measure-{level}"
            git(args.clone, "remote", "add", remote, bare)
            try:
                env = dict(os.environ, GIT_AGENT_CONTEXT_SHARE_LEVEL=level)
                began = time.monotonic()
                subprocess.run(
                    [binary, "sync", remote], cwd=args.clone, env=env, check=True,
                    capture_output=True,
                )
                took = time.monotonic() - began
                # A second sync, with nothing new: what the pre-push hook costs every push.
                began = time.monotonic()
                subprocess.run(
                    [binary, "sync", remote], cwd=args.clone, env=env, check=True,
                    capture_output=True,
                )
                again = time.monotonic() - began
            finally:
                git(args.clone, "remote", "remove", remote)
                git(args.clone, "update-ref", "-d", f"refs/notes/remotes/{remote}/agent-context")
            describe(level, note_sizes(bare), pack_bytes(bare), pack, whole)
            print(f"{'':>10}  sync {took:.2f} s, again with nothing new {again:.2f} s")


if __name__ == "__main__":
    main()
