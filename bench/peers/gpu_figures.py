"""What the PyTorch peers of the embedding benchmarks share: a figure printed as one JSON line naming the GPU and
torch, and the median wall time of a function with the GPU synchronised around it."""
import json
import statistics
import time

import torch


def emit(row):
    row["device"] = torch.cuda.get_device_name()
    row["torch"] = torch.__version__
    print(json.dumps(row), flush=True)


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
