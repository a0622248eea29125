"""Where one short query's time goes on the GPU: accel.embed.Model.encode([query]) under PyTorch's profiler (CUPTI:
every CUDA runtime call of the process, on any thread, and every GPU activity), then per query the moments that
matter, as medians over the profiled queries, in µs from the call's start:

  first_api    the first CUDA runtime call (accel's actor took the first request)
  launch       cudaGraphLaunch's call (the model's captured graph)
  gpu_first    the first GPU activity (the first upload's copy)
  graph_first  the graph's first kernel
  graph_last   the graph's last kernel's end
  gpu_last     the last GPU activity's end (the download's copy)
  done         encode returned

and the GPU's busy time (the union of its activities) and kernel count per query. The unprofiled p50 of the same
queries is printed first, so that the profiler's own cost is seen: on the H200 CUPTI made cudaGraphLaunch take about
2 µs a kernel node (85 µs for MiniLM's 50), so `launch` to `graph_first` is the profiler's as much as ours; the order
of the calls and what the GPU waits for are what this is for. Needs torch with CUDA and the accel package with
the CUDA tier; the model folder is any embedding model accel loads (bench/embed/make_bench_models.py makes them).
    python3 bench/embed/query_timeline.py MODEL_DIR [--queries 50] [--trace OUT.json]
"""

import argparse
import json
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

import accel

WORDS = ("how do I reset a forgotten password on the router what is the capital of mongolia best way to cook rice "
         "in a pan symptoms of vitamin d deficiency in adults cheap flights from lisbon to berlin in march").split()


def queries(count):
    out = []
    for i in range(count):
        length = 3 + (i * 7) % 10
        out.append(" ".join(WORDS[(i * 5 + j * 3) % len(WORDS)] for j in range(length)))
    return out


def gpu_busy(intervals):
    busy, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    return busy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--trace", help="keep the profiler's chrome trace here")
    args = parser.parse_args()

    device = accel.Device.open("cuda")
    model = accel.embed.Model(args.model, device=device)
    texts = queries(args.queries + 300)
    for text in texts[:300]:            # every bucket a query reaches compiled and captured
        model.encode([text])
    timed = []
    for text in texts[300:]:
        began = time.perf_counter()
        model.encode([text])
        timed.append((time.perf_counter() - began) * 1e6)
    print(json.dumps({"figure": "query_unprofiled", "queries": len(timed), "p50_us": statistics.median(timed)}))

    torch.cuda.init()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i, text in enumerate(texts[300:]):
            with record_function(f"query {i}"):
                model.encode([text])
    with tempfile.TemporaryDirectory() as scratch:
        path = args.trace or f"{scratch}/trace.json"
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]

    windows = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                     if e.get("cat") == "user_annotation" and e["name"].startswith("query "))
    api = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    rows = []
    for start, end in windows:
        mine_api = [e for e in api if start <= e["ts"] < end]
        mine_gpu = [e for e in gpu if start <= e["ts"] < end + 50]
        launches = [e for e in mine_api if e["name"] == "cudaGraphLaunch"]
        kernels = [e for e in mine_gpu if e["cat"] == "kernel"]
        if not mine_api or not mine_gpu or not kernels:
            continue
        rows.append({
            "first_api": min(e["ts"] for e in mine_api) - start,
            "launch": (launches[0]["ts"] - start) if launches else float("nan"),
            "gpu_first": min(e["ts"] for e in mine_gpu) - start,
            "graph_first": min(e["ts"] for e in kernels) - start,
            "graph_last": max(e["ts"] + e["dur"] for e in kernels) - start,
            "gpu_last": max(e["ts"] + e["dur"] for e in mine_gpu) - start,
            "done": end - start,
            "gpu_busy": gpu_busy([(e["ts"], e["ts"] + e["dur"]) for e in mine_gpu]),
            "kernels": len(kernels),
            "copies": sum(e["cat"] == "gpu_memcpy" for e in mine_gpu),
            "api_calls": len(mine_api),
        })
    summary = {key: round(statistics.median(r[key] for r in rows), 1) for key in rows[0]} if rows else {}
    print(json.dumps({"figure": "query_timeline", "queries": len(rows), "median_us": summary}))
    if windows:     # the middle query's calls and GPU work, in order
        start, end = windows[len(windows) // 2]
        for e in sorted((e for e in api + gpu if start <= e["ts"] < end + 50), key=lambda e: e["ts"]):
            print(f'{e["ts"] - start:8.1f} {e["dur"]:7.1f} {e.get("cat"):13} tid {e.get("tid")}: {e["name"][:70]}')


if __name__ == "__main__":
    main()
