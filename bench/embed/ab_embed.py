#!/usr/bin/env python3
"""Two or more embed_bench binaries taking turns, round after round, so that a slow spell of the machine does not fall on
one of them: a change's effect on tokens ready, on text in and on one query's p50 is a few percent, and one binary's runs
spread by about as much on the H200 (±10 µs a query, docs/PERFORMANCE.md §54). Prints each round, then each figure's
median per binary and each binary's against the first. A run that fails is left out of the medians and named after
the table with its exit status and the end of its stderr (the script then exits 1), so one crash loses one run.

    bench/embed/ab_embed.py BEFORE/embed_bench AFTER/embed_bench [MORE/embed_bench...] [--rounds 4] -- EMBED_BENCH_ARGS...

e.g. `... -- --device cuda --model build/models/minilm_mean --passages 8192 --queries 2000`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", metavar="BINARY",
                        help="two or more embed_bench binaries; the first is the one the others are compared with")
    parser.add_argument("--rounds", type=int, default=4)
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
    for round_number in range(options.rounds):
        # Who goes first rotates too: a process's first run after another's may find the GPU warmer.
        shift = round_number % len(named)
        for name, binary in named[shift:] + named[:shift]:
            found, failure = run_once(binary, args)
            if failure is not None:
                failures.append(f"round {round_number + 1} {name}: {failure}")
                print(failures[-1], flush=True)
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
    for failure in failures:
        print(f"failed: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
