#!/usr/bin/env python3
"""Draw stored reasoning at random and score it once judged: the share of what the memory holds
that is reasoning a developer would want.

Run by hand, not in CI (see docs/quality.md):

    python3 eval/stored.py draw --clone <clone whose notes hold extracted sessions> \\
        --out <judging folder> [--count 100] [--seed 20261127]
    # the judges label <judging folder>/items.jsonl into <judging folder>/judged.jsonl
    # (eval/RUBRIC.md, applied to each note whole): {"n": 1, "label": "real"|"partly"|"noise"}
    python3 eval/stored.py score --out <judging folder>

    python3 eval/stored.py pair --before <clone> --after <clone> --out <judging folder> \\
        [--count 60] [--seed 20261127]
    # two judges, each on their own batch: <folder>/a/items.jsonl and <folder>/b/items.jsonl
    # into judged.jsonl beside it, as above
    python3 eval/stored.py score --out <judging folder>

`draw` reads every note of `refs/notes/agent-context` in the clone (`eval/linking.py` makes such
a clone of the whole corpus) and picks `--count` of its decisions, rejections, trade-offs and
findings at random. Each item shows what a hook shows: the kind, the summary, the rationale (cut
at 500 characters), the files and the prompt that led to it; not its origin or the session. The
key (`key.json`) keeps each item's event id, kind and origin for `score`, which prints the labels'
shares, all together and by kind: `real` is the strict precision.

`pair` compares two builds' versions of the same events: it picks `--count` of the reasoning
events both clones hold that a judge would see differently, and splits them between two batches
so that each judge sees every event once: batch `a` has the first half as before and the second
as after, batch `b` the other way round, each shuffled. `score` then gives the shares before and
after, and how each event's label moved.
"""

import argparse
import collections
import json
import os
import random
import subprocess

KINDS = {"decision": "decided", "rejection": "rejected", "tradeoff": "trade-off", "discovery": "found"}


def events(clone):
    """Every event of every note in `clone`, by id."""
    listed = subprocess.run(
        ["git", "-C", clone, "notes", "--ref=agent-context", "list"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    blobs = listed[0::2]
    out = subprocess.run(
        ["git", "-C", clone, "cat-file", "--batch"],
        input=("\n".join(blobs) + "\n").encode(), capture_output=True, check=True,
    ).stdout
    found, at = {}, 0
    while at < len(out):
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        note = out[end + 1:end + 1 + size].decode("utf-8", "replace")
        at = end + 1 + size + 1
        for line in note.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and "id" in event:
                found[event["id"]] = event
    return found


def draw(args):
    reasoning = sorted(
        (e for e in events(args.clone).values() if e.get("kind") in KINDS),
        key=lambda e: e["id"],
    )
    rng = random.Random(args.seed)
    chosen = rng.sample(reasoning, min(args.count, len(reasoning)))
    os.makedirs(args.out, exist_ok=True)
    key = []
    with open(os.path.join(args.out, "items.jsonl"), "w") as items:
        for n, e in enumerate(chosen, 1):
            items.write(json.dumps(item(n, e)) + "\n")
            key.append({"n": n, "id": e["id"], "kind": e["kind"], "origin": e.get("origin")})
    with open(os.path.join(args.out, "key.json"), "w") as f:
        json.dump({"stored": len(reasoning), "items": key}, f)
    print(f"{len(chosen)} of {len(reasoning)} stored reasoning events drawn into {args.out}")


def item(n, e):
    """What a judge sees of event `e`: what a hook shows."""
    return {
        "n": n,
        "kind": KINDS[e["kind"]],
        "summary": e["summary"],
        "rationale": (e.get("rationale") or "")[:500],
        "files": (e.get("files_affected") or [])[:3],
        "prompt": (e.get("prompt_context") or "")[:200],
    }


def pair(args):
    before, after = events(args.before), events(args.after)
    changed = sorted(
        i for i, e in after.items()
        if e.get("kind") in KINDS and i in before and before[i].get("kind") == e["kind"]
        and item(0, before[i]) != item(0, e)
    )
    rng = random.Random(args.seed)
    chosen = rng.sample(changed, min(args.count, len(changed)))
    half = len(chosen) // 2
    key = {"changed": len(changed), "stored": len(after), "pairs": []}
    for batch, (first, second) in {"a": (before, after), "b": (after, before)}.items():
        rows = [(i, first, "before" if first is before else "after") for i in chosen[:half]]
        rows += [(i, second, "before" if second is before else "after") for i in chosen[half:]]
        rng.shuffle(rows)
        os.makedirs(os.path.join(args.out, batch), exist_ok=True)
        with open(os.path.join(args.out, batch, "items.jsonl"), "w") as items:
            for n, (i, store, version) in enumerate(rows, 1):
                items.write(json.dumps(item(n, store[i])) + "\n")
                key["pairs"].append({"batch": batch, "n": n, "id": i, "version": version})
    with open(os.path.join(args.out, "key.json"), "w") as f:
        json.dump(key, f)
    print(f"{len(chosen)} of {len(changed)} changed reasoning events, in two batches, in {args.out}")


def judged(path):
    labels = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                labels[d["n"]] = d["label"]
    return labels


def score_pairs(args, key):
    labels = {b: judged(os.path.join(args.out, b, "judged.jsonl")) for b in ("a", "b")}
    by_event = collections.defaultdict(dict)
    for p in key["pairs"]:
        label = labels[p["batch"]].get(p["n"])
        if label:
            by_event[p["id"]][p["version"]] = label
    both = {i: v for i, v in by_event.items() if len(v) == 2}
    print(f"events a judge would see differently: {key['changed']}; judged both ways: {len(both)}")
    for version in ("before", "after"):
        c = collections.Counter(v[version] for v in both.values())
        n = sum(c.values()) or 1
        print(f"{version:7} " + ", ".join(f"{l} {c[l]} ({c[l] / n:.0%})" for l in ("real", "partly", "noise")))
    moves = collections.Counter((v["before"], v["after"]) for v in both.values())
    for (b, a), count in sorted(moves.items()):
        print(f"  {b:6} -> {a:6} {count}")


def score(args):
    with open(os.path.join(args.out, "key.json")) as f:
        key = json.load(f)
    if "pairs" in key:
        return score_pairs(args, key)
    labels = judged(os.path.join(args.out, "judged.jsonl"))
    groups = collections.defaultdict(collections.Counter)
    for item in key["items"]:
        label = labels.get(item["n"])
        if label:
            groups["all"][label] += 1
            groups[item["kind"]][label] += 1
    print(f"stored reasoning events: {key['stored']}; judged: {sum(groups['all'].values())}")
    for name in ["all", *KINDS]:
        c = groups.get(name)
        if not c:
            continue
        n = sum(c.values())
        shares = ", ".join(f"{l} {c[l]} ({c[l] / n:.0%})" for l in ("real", "partly", "noise"))
        print(f"{name:10} {n:4}  {shares}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, clones, count in (("draw", ["--clone"], 100), ("pair", ["--before", "--after"], 60)):
        drawing = sub.add_parser(name)
        for clone in clones:
            drawing.add_argument(clone, required=True)
        drawing.add_argument("--out", required=True)
        drawing.add_argument("--count", type=int, default=count)
        drawing.add_argument("--seed", type=int, default=20261127)
    s = sub.add_parser("score")
    s.add_argument("--out", required=True)
    args = parser.parse_args()
    {"draw": draw, "pair": pair, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
