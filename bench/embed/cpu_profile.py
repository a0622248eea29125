"""Where the CPU device's embedding time goes: embed_bench --device cpu run once with oneDNN's verbose log on, the
time of every oneDNN primitive it ran summed by kind, implementation and shape, against the wall time of the
same run. What is left of the wall time is ours: attention, norms, activations and copies between the matmuls,
the graph's steps and the threads' hand-offs.

  python3 bench/embed/cpu_profile.py --embed-bench build/release/bench/embed_bench \
      --model .deps/models/all-MiniLM-L6-v2 [--passages 500] [--repeats 2] [--json out.jsonl]

Prints a table and, with --json, one JSON line per primitive group and one for the total.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time


def run(args):
    env = dict(os.environ, ONEDNN_VERBOSE="2")
    command = [args.embed_bench, "--device", "cpu", "--model", args.model, "--passages", str(args.passages),
               "--queries", str(args.queries), "--repeats", str(args.repeats)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"cpu_profile: {' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout, wall


def summarise(stdout):
    groups = collections.defaultdict(lambda: {"calls": 0, "ms": 0.0})
    created = collections.Counter()
    figures = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            figures.append(json.loads(line))
            continue
        if not line.startswith("onednn_verbose,"):
            continue
        fields = line.split(",")
        if fields[1].startswith("create"):
            created[fields[1]] += 1
            continue
        if fields[1] != "exec":
            continue
        kind, implementation, shape = fields[3], fields[4], fields[-2]
        group = groups[(kind, implementation, shape)]
        group["calls"] += 1
        group["ms"] += float(fields[-1])
    return groups, created, figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embed-bench", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--passages", type=int, default=500)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", help="also write the rows here (JSONL)")
    args = parser.parse_args()
    stdout, wall = run(args)
    groups, created, figures = summarise(stdout)
    primitives_ms = sum(g["ms"] for g in groups.values())
    rows = sorted(groups.items(), key=lambda item: -item[1]["ms"])
    print(f"{'ms':>10} {'calls':>7} {'ms/call':>9}  kind / implementation / shape")
    for (kind, implementation, shape), g in rows[:25]:
        print(f"{g['ms']:10.1f} {g['calls']:7d} {g['ms'] / g['calls']:9.3f}  {kind} {implementation} {shape}")
    print(f"oneDNN primitives: {primitives_ms / 1e3:.2f} s of the process's {wall:.2f} s "
          f"({100 * primitives_ms / 1e3 / wall:.0f} %); primitive creations: {dict(created)}")
    for figure in figures:
        print(json.dumps(figure))
    if args.json:
        with open(args.json, "w") as out:
            for (kind, implementation, shape), g in rows:
                out.write(json.dumps({"kind": kind, "implementation": implementation, "shape": shape, **g}) + "\n")
            out.write(json.dumps({"total_primitive_ms": primitives_ms, "process_s": wall,
                                  "creations": dict(created), "figures": figures}) + "\n")


if __name__ == "__main__":
    main()
