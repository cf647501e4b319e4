#!/usr/bin/env python3
"""Measure distilled reasoning on the labelled test half: precision and recall of what a small
model draws from real sessions, beside the heuristics' and of both together.

Run by hand, not in CI: it sends the sessions' text to a model, which costs tokens.

    python3 eval/distill.py --corpus <checkpoints checkout> --bin target/release/git-agent-context \
        [--mode api|claude] [--half test] [--model M] [--base-url URL]

`--mode api` (the default) needs ANTHROPIC_API_KEY; `--mode claude` runs your own logged-in
`claude -p`. Without either it prints one line saying why and exits 0.

`--stand-in DIR` answers with a model of your choosing instead, by hand: a Messages API
stand-in on 127.0.0.1 writes each request to DIR/req/<key>.json (`system` and `text`) and
answers it with DIR/ans/<key>.json (the model's reply, a JSON object) once that file exists,
else with an error (the session is counted as failed). Run once to collect the requests, have
the model answer each, run again to score.

The corpus is a checkout of entireio/cli's branch `entire/checkpoints/v1`; the labelled
sentences (tests/data/reasoning-labelled.jsonl) name the transcript each comes from. Each
transcript of the half is extracted into a fresh repository and distilled in one request
(`distill --json`, the budgets raised for the run: the longest session of the test half is
about 65,000 tokens). A labelled sentence counts as found by the heuristics when a stored
decision, rejection, trade-off or finding was drawn from it (as eval/sample.py matches them),
and as found by the model when the quote of a distilled decision, rejection, trade-off,
constraint or finding overlaps it (one holds the other, or they share half the shorter one).
Only labelled sentences are judged: a quote that matches none is counted apart, unjudged.
"""

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from sample import REASONING, assistant_blocks, full_sentence, paragraphs_of

# Kinds of distilled items that claim reasoning (constraints are stored as decisions);
# explorations, features and next steps are the session's summary, not judged here.
CLAIMS = ("decision", "rejection", "tradeoff", "discovery")


def fold(s):
    return " ".join(s.split()).lower()


def overlaps(quote, sentence):
    q, s = fold(quote), fold(sentence)
    if not q or not s:
        return False
    if q in s or s in q:
        return True
    m = difflib.SequenceMatcher(None, q, s, autojunk=False)
    match = m.find_longest_match(0, len(q), 0, len(s))
    return match.size >= 0.5 * min(len(q), len(s))


def stand_in(folder):
    """Serve the Messages API on 127.0.0.1 from `folder` (see the module's text); its URL."""
    import hashlib
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    os.makedirs(os.path.join(folder, "req"), exist_ok=True)
    os.makedirs(os.path.join(folder, "ans"), exist_ok=True)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            text = body["messages"][0]["content"]
            key = hashlib.sha256((body["system"] + "\0" + text).encode()).hexdigest()[:16]
            with open(os.path.join(folder, "req", key + ".json"), "w") as f:
                json.dump({"system": body["system"], "text": text}, f)
            answer = os.path.join(folder, "ans", key + ".json")
            if not os.path.exists(answer):
                self.reply(500, {"type": "error", "error": {
                    "type": "api_error", "message": f"no answer yet in {answer}"}})
                return
            with open(answer) as f:
                reply = f.read()
            self.reply(200, {
                "id": "msg_" + key, "type": "message", "role": "assistant",
                "model": body.get("model"), "content": [{"type": "text", "text": reply}],
                "stop_reason": "end_turn",
                # Characters, not tokens: the stand-in has no tokenizer.
                "usage": {"input_tokens": len(text), "output_tokens": len(reply)}})

        def reply(self, status, payload):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}"


def run(args, cmd, repo, env=None):
    return subprocess.run([args.bin, *cmd], cwd=repo, capture_output=True, text=True, env=env)


def session_of(args, transcript):
    """The sentences the heuristics stored and the quotes the model's items were kept for."""
    with tempfile.TemporaryDirectory() as repo:
        subprocess.run(["git", "init", "-q", repo], check=True)
        out = run(args, ["extract", "--transcript", transcript], repo)
        if out.returncode != 0:
            raise SystemExit(f"error: extract {transcript}: {out.stderr.strip()}")
        events = []
        pending = os.path.join(repo, ".git/agent-context/pending")
        for name in os.listdir(pending) if os.path.isdir(pending) else []:
            if name.endswith(".jsonl"):
                with open(os.path.join(pending, name)) as f:
                    events.extend(json.loads(l) for l in f if l.strip())
        by_origin = {}
        for origin, text in assistant_blocks(transcript):
            by_origin.setdefault(origin, []).append(paragraphs_of(text))
        stored = set()
        for e in events:
            if e["kind"] not in REASONING:
                continue
            for paragraphs in by_origin.get(e["origin"], []):
                s, _ = full_sentence(e["summary"], paragraphs)
                if s:
                    stored.add(s)
                    break

        config = ["[distill]", f'mode = "{args.mode}"', "session_tokens = 200000",
                  "daily_tokens = 10000000", "timeout_ms = 300000"]
        if args.model:
            config.append(f'model = "{args.model}"')
        if args.base_url:
            config.append(f'base_url = "{args.base_url}"')
        with open(os.path.join(repo, ".git/agent-context/config.toml"), "w") as f:
            f.write("\n".join(config) + "\n")
        out = run(args, ["distill", "--json"], repo)
        try:
            report = json.loads(out.stdout)
        except ValueError:
            raise SystemExit(f"error: distill {transcript}: {out.stderr.strip()}")
        quotes, failures, tokens = [], [], 0
        for s in report["sessions"]:
            if s["outcome"] == "distilled":
                quotes += [k["quote"] for k in s["kept"] if k["kind"] in CLAIMS]
                tokens += s["input_tokens"] + s["output_tokens"]
            elif s["outcome"] != "nothing_new":
                failures.append(s.get("message") or s["outcome"])
        return stored, quotes, failures, tokens


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--labelled", default=os.path.join(
        os.path.dirname(__file__), "..", "tests/data/reasoning-labelled.jsonl"))
    ap.add_argument("--half", default="test")
    ap.add_argument("--mode", choices=("api", "claude"), default="api")
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    ap.add_argument("--stand-in", metavar="DIR")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    if args.stand_in:
        args.mode, args.base_url = "api", stand_in(os.path.abspath(args.stand_in))
        os.environ["ANTHROPIC_API_KEY"] = "stand-in"
    if args.mode == "api" and not os.environ.get("ANTHROPIC_API_KEY", "").strip():
        print("skipped: distilled events not measured: ANTHROPIC_API_KEY is not set "
              "(or use --mode claude with a logged-in claude on PATH)")
        return
    if args.mode == "claude" and not shutil.which("claude"):
        print("skipped: distilled events not measured: no claude on PATH "
              "(or use --mode api with ANTHROPIC_API_KEY)")
        return

    with open(args.labelled) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    rows = [r for r in rows if r["half"] == args.half]
    sources = sorted({r["source"] for r in rows})
    found = {}  # source -> (stored sentences, quotes)
    unjudged = tokens = 0
    for n, source in enumerate(sources, 1):
        transcript = os.path.join(args.corpus, source)
        if not os.path.exists(transcript):
            print(f"{source}: not in the corpus, its sentences left out", file=sys.stderr)
            continue
        stored, quotes, failures, spent = session_of(args, transcript)
        tokens += spent
        for failure in failures:
            print(f"{source}: {failure}", file=sys.stderr)
        labelled = [r["text"] for r in rows if r["source"] == source]
        unjudged += sum(1 for q in quotes if not any(overlaps(q, t) for t in labelled))
        found[source] = (stored, quotes)
        print(f"[{n}/{len(sources)}] {source}: {len(quotes)} distilled claims", file=sys.stderr)

    judged = [r for r in rows if r["source"] in found]
    keep = sum(1 for r in judged if r["label"] == "keep")
    ways = {
        "heuristics": lambda r: r["text"] in found[r["source"]][0],
        "distilled": lambda r: any(overlaps(q, r["text"]) for q in found[r["source"]][1]),
    }
    ways["both together"] = lambda r: ways["heuristics"](r) or ways["distilled"](r)
    print(f"{len(judged)} labelled sentences of {len(found)} sessions ({keep} worth keeping); "
          + (f"{tokens} characters sent and answered; stand-in {args.stand_in}" if args.stand_in
             else f"{tokens} tokens; mode {args.mode}"))
    print("| on the labelled sentences | found | precision | recall |")
    print("|---|---:|---:|---:|")
    for name, hit in ways.items():
        hits = [r for r in judged if hit(r)]
        right = sum(1 for r in hits if r["label"] == "keep")
        precision = right / len(hits) if hits else 0.0
        recall = right / keep if keep else 0.0
        print(f"| {name} | {len(hits)} | {precision:.2f} | {recall:.2f} |")
    print(f"distilled claims matching no labelled sentence (not judged): {unjudged}")


if __name__ == "__main__":
    main()
