#!/usr/bin/env python3
"""Two embed_bench binaries taking turns, round after round, so that a slow spell of the machine does not fall on one of
them: a change's effect on tokens ready, on text in and on one query's p50 is a few percent, and one binary's runs
spread by about as much on the H200 (±10 µs a query, docs/PERFORMANCE.md §54). Prints each round, then each figure's
median per binary and after / before.

    bench/embed/ab_embed.py BEFORE/embed_bench AFTER/embed_bench [--rounds 4] -- EMBED_BENCH_ARGS...

e.g. `... -- --device cuda --model build/models/minilm_mean --passages 8192 --queries 2000`. The binaries' own
stderr goes to this script's.
"""

import argparse
import json
import statistics
import subprocess
import sys

FIGURES = (("throughput_tokens_ready", "tokens_per_s", "tokens ready (tokens/s)"),
           ("end_to_end", "tokens_per_s", "text in (tokens/s)"),
           ("single_query", "p50_us", "one query p50 (µs)"),
           ("single_query", "p99_us", "one query p99 (µs)"))


def run_once(binary, args):
    done = subprocess.run([binary, *args], stdout=subprocess.PIPE, text=True, check=True)
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            for figure, field, name in FIGURES:
                if row.get("figure") == figure and field in row:
                    found[name] = row[field]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=4)
    ours, args = (sys.argv[1:], [])
    if "--" in ours:
        split = ours.index("--")
        ours, args = ours[:split], ours[split + 1:]
    options = parser.parse_args(ours)
    runs = {"before": [], "after": []}
    for round_number in range(options.rounds):
        # Who goes first alternates too: a process's first run after another's may find the GPU warmer.
        order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
        for which in order:
            found = run_once(getattr(options, which), args)
            runs[which].append(found)
            print(f"round {round_number + 1} {which}: "
                  + ", ".join(f"{name} {value:.6g}" for name, value in found.items()), flush=True)
    print("| figure | before (median) | after (median) | after / before |")
    print("|---|---|---|---|")
    for _, _, name in FIGURES:
        before = [r[name] for r in runs["before"] if name in r]
        after = [r[name] for r in runs["after"] if name in r]
        if not before or not after:
            continue
        b, a = statistics.median(before), statistics.median(after)
        print(f"| {name} | {b:.6g} | {a:.6g} | {a / b:.4f} |")


if __name__ == "__main__":
    sys.exit(main())
