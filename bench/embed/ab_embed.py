#!/usr/bin/env python3
"""Two or more embed_bench binaries taking turns, round after round, so that a slow spell of the machine does not fall on
one of them: a change's effect on tokens ready, on text in and on one query's p50 is a few percent, and one binary's runs
spread by about as much on the H200 (±10 µs a query, docs/PERFORMANCE.md §54). Prints each round, then each figure's
median per binary and each binary's against the first. A run that fails is left out of the medians and named after
the table with its exit status and the end of its stderr (the script then exits 1), so one crash loses one run.

Speed means nothing if the results changed: in the first round each binary also writes what it computed (the trace's
embeddings, or with --rerank the pairs' scores), and each is compared with the first binary's: the lowest cosine of a
row (or the largest difference of a score) is printed, and one below --min-cosine (above --max-score-difference)
exits 1. docs/PERFORMANCE.md §74: an A/B of speed alone once passed a change whose embeddings were wrong.

    bench/embed/ab_embed.py BEFORE/embed_bench AFTER/embed_bench [MORE/embed_bench...] [--rounds 4] -- EMBED_BENCH_ARGS...

e.g. `... -- --device cuda --model build/models/minilm_mean --passages 8192 --queries 2000`.
"""

import argparse
import array
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

FIGURES = (("throughput_tokens_ready", "tokens_per_s", "tokens ready (tokens/s)"),
           ("end_to_end", "tokens_per_s", "text in (tokens/s)"),
           ("single_query", "p50_us", "one query p50 (µs)"),
           ("single_query", "p99_us", "one query p99 (µs)"),
           ("rerank_tokens_ready", "pairs_per_s", "pairs ready (pairs/s)"),
           ("rerank_single_pair", "p50_us", "one pair p50 (µs)"))


def run_once(binary, args):
    """The run's figures, or None and why it failed."""
    done = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        return None, f"exit {done.returncode}: " + " | ".join(done.stderr.strip().splitlines()[-5:])
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            for figure, field, name in FIGURES:
                if row.get("figure") == figure and field in row:
                    found[name] = row[field]
    return found, None


def floats(path):
    values = array.array("f")
    with open(path, "rb") as f:
        values.frombytes(f.read())
    if sys.byteorder != "little":
        values.byteswap()
    return values


def lowest_cosine(ours, theirs, rows, threshold):
    """The lowest cosine between row i of two row-major files of `rows` rows, and how many rows fall under
    `threshold`."""
    if len(ours) != len(theirs) or rows == 0 or len(ours) % rows != 0:
        return None, None
    width = len(ours) // rows
    lowest, under = 1.0, 0
    for r in range(rows):
        a, b = ours[r * width:(r + 1) * width], theirs[r * width:(r + 1) * width]
        dot = sum(x * y for x, y in zip(a, b))
        norms = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
        cosine = 1.0 if norms == 0 and dot == 0 else (dot / norms if norms > 0 else 0.0)
        lowest = min(lowest, cosine)
        under += cosine < threshold
    return lowest, under


def compare_results(names, written, trace, rerank, options):
    """Each binary's results against the first's; the failures, as lines."""
    failures = []
    first = names[0]
    if first not in written:
        return [f"results: {first} wrote none to compare with"]
    reference = floats(written[first])
    rows = sum(1 for _ in open(trace)) if not rerank else 0
    for name in names[1:]:
        if name not in written:
            failures.append(f"results: {name} wrote none")
            continue
        ours = floats(written[name])
        if rerank:
            if len(ours) != len(reference):
                failures.append(f"results: {name} wrote {len(ours)} scores, {first} {len(reference)}")
                continue
            largest = max((abs(a - b) for a, b in zip(ours, reference)), default=0.0)
            print(f"results: {name}'s scores against {first}'s: largest difference {largest:.3g}")
            if not largest <= options.max_score_difference:
                failures.append(f"results: {name}'s scores differ from {first}'s by {largest:.3g}")
            continue
        lowest, under = lowest_cosine(ours, reference, rows, options.min_cosine)
        if lowest is None:
            failures.append(f"results: {name} wrote {len(ours)} floats, {first} {len(reference)} ({rows} texts)")
            continue
        print(f"results: {name}'s embeddings against {first}'s: lowest cosine {lowest:.7f}, {under} of {rows} under "
              f"{options.min_cosine:g}")
        if not lowest >= options.min_cosine:
            failures.append(f"results: {name}'s embeddings differ from {first}'s (lowest cosine {lowest:.7f})")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", metavar="BINARY",
                        help="two or more embed_bench binaries; the first is the one the others are compared with")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--min-cosine", type=float, default=0.999,
                        help="the lowest cosine a binary's embedding may have to the first binary's")
    parser.add_argument("--max-score-difference", type=float, default=0.05,
                        help="with --rerank: the largest difference of a score from the first binary's")
    ours, args = (sys.argv[1:], [])
    if "--" in ours:
        split = ours.index("--")
        ours, args = ours[:split], ours[split + 1:]
    options = parser.parse_args(ours)
    if len(options.binaries) < 2:
        parser.error("give at least two binaries")
    # Named by their folder where the folders differ (before/embed_bench, after/embed_bench), else by their path.
    folders = [os.path.basename(os.path.dirname(b)) or b for b in options.binaries]
    names = folders if len(set(folders)) == len(folders) else options.binaries
    runs = {name: [] for name in names}
    failures = []
    named = list(zip(names, options.binaries))
    rerank = "--rerank" in args
    # Where the caller writes results of its own, the comparison is left to it.
    check_results = not any(a in args for a in ("--embeddings", "--trace", "--scores"))
    scratch = tempfile.mkdtemp(prefix="ab_embed.")
    trace = os.path.join(scratch, "trace.jsonl")
    written = {}
    for round_number in range(options.rounds):
        # Who goes first rotates too: a process's first run after another's may find the GPU warmer.
        shift = round_number % len(named)
        for index, (name, binary) in enumerate(named[shift:] + named[:shift]):
            extra = []
            if round_number == 0 and check_results:  # what each computed, written after its timed figures
                written[name] = os.path.join(scratch, f"{index}.f32")
                extra = ["--scores", written[name]] if rerank else ["--embeddings", written[name], "--trace", trace]
            found, failure = run_once(binary, args + extra)
            if failure is not None:
                failures.append(f"round {round_number + 1} {name}: {failure}")
                print(failures[-1], flush=True)
                written.pop(name, None)
                continue
            runs[name].append(found)
            print(f"round {round_number + 1} {name}: "
                  + ", ".join(f"{figure} {value:.6g}" for figure, value in found.items()), flush=True)
    first = names[0]
    print("| figure | " + " | ".join(f"{name} (median)" for name in names) + " | "
          + " | ".join(f"{name} / {first}" for name in names[1:]) + " |")
    print("|---" * (2 * len(names)) + "|")
    for _, _, figure in FIGURES:
        medians = [statistics.median(values) if (values := [r[figure] for r in runs[name] if figure in r]) else None
                   for name in names]
        if any(m is None for m in medians):
            continue
        print(f"| {figure} | " + " | ".join(f"{m:.6g}" for m in medians) + " | "
              + " | ".join(f"{m / medians[0]:.4f}" for m in medians[1:]) + " |")
    if check_results:
        failures += compare_results(names, written, trace, rerank, options)
    shutil.rmtree(scratch)
    for failure in failures:
        print(f"failed: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
