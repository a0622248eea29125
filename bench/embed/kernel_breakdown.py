"""Where one pass (or one query) of embed_bench spends its GPU time, from Nsight Compute's per-kernel durations.

  ncu --profile-from-start off --metrics gpu__time_duration.sum --csv --page raw --cache-control none \
      --clock-control none embed_bench --device cuda --model M --profile ready > kernels.csv
  python3 kernel_breakdown.py kernels.csv [--tokens N] [--wall-us W]

embed_bench's --profile opens the profiler's window around the first timed tokens-ready pass (or the last query),
so the file holds that work's kernels only. They are summed by category (the op they belong to). With --tokens (the
pass's tokens) the table gives GPU time per 1,000 tokens and the tokens/s the kernels alone allow; with --wall-us
(the pass's wall time, measured without the profiler) the share of it in which the GPU ran no kernel, an upper
bound: the profiler replays each kernel alone, where a pass at the GPU's power cap runs them at lower clocks
(docs/PERFORMANCE.md §62: a Qwen3-0.6B pass at 1,635 MHz on the H200, against 1,980 MHz alone).
"""
import argparse
import csv
import json
import re
import sys

CATEGORIES = [
    ("matmul (cuBLASLt)", re.compile(r"gemm|xmma|nvjet|cutlass|cublas", re.I)),
    ("matmul (graph kernel)", re.compile(r"matmul_kernel")),
    ("attention", re.compile(r"attention", re.I)),
    ("layer/rms norm (+ residual)", re.compile(r"norm_kernel")),
    ("embedding gather + norm", re.compile(r"embedding_kernel|gather_kernel|positions_kernel")),
    ("bias + activation", re.compile(r"bias_activation")),
    ("elementwise (binary, unary, cast)", re.compile(r"binary_kernel|unary_kernel|cast_kernel")),
    ("rope (+ q/k norms)", re.compile(r"rope\w*_kernel")),
    ("gated activation · up", re.compile(r"gated_kernel")),
    ("pooling + l2", re.compile(r"pool_kernel|l2_kernel")),
    ("copies + padding", re.compile(r"strided_copy|repeat_last|copy_inputs_kernel|copy_kernel|memcpy|memset", re.I)),
]


def category(name):
    for label, pattern in CATEGORIES:
        if pattern.search(name):
            return label
    return "other: " + name.split("(")[0][-60:]


def read_kernels(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages start with ==PROF==
    rows = list(csv.reader(lines))
    header = rows[0]
    name_col, time_col = header.index("Kernel Name"), header.index("gpu__time_duration.sum")
    unit = rows[1][time_col] if len(rows) > 1 and not re.match(r"^[\d.,]+$", rows[1][time_col]) else "nsecond"
    scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}.get(unit, 1e-3)
    kernels = []
    for row in rows[1:]:
        value = row[time_col].replace(",", "")
        if re.match(r"^[\d.]+$", value):
            kernels.append((row[name_col], float(value) * scale))
    return kernels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--tokens", type=float, help="tokens of one pass (embed_bench's throughput row)")
    parser.add_argument("--wall-us", type=float, help="one pass's wall time (tokens / tokens_per_s)")
    args = parser.parse_args()
    kernels = read_kernels(args.csv)
    if not kernels:
        sys.exit(f"{args.csv}: no kernel rows (did ncu run?)")
    total = sum(t for _, t in kernels)
    by_category = {}
    for name, t in kernels:
        c = by_category.setdefault(category(name), [0, 0.0])
        c[0] += 1
        c[1] += t
    summary = {"kernels": len(kernels), "kernel_us_per_pass": total}
    if args.tokens:
        summary["kernel_tokens_per_s"] = args.tokens / (total * 1e-6)
    if args.wall_us:
        summary["wall_us_per_pass"] = args.wall_us
        summary["gpu_idle_fraction"] = max(0.0, 1 - total / args.wall_us)
    print("| category | kernels | µs per pass | share of kernel time |" + (" µs per 1,000 tokens |" if args.tokens else ""))
    print("|---|---|---|---|" + ("---|" if args.tokens else ""))
    for label, (count, t) in sorted(by_category.items(), key=lambda kv: -kv[1][1]):
        per_k = f" {t / args.tokens * 1e3:.2f} |" if args.tokens else ""
        print(f"| {label} | {count} | {t:,.1f} | {100 * t / total:.1f} % |{per_k}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
