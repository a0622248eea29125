"""What a PyTorch user runs to move a tensor between GPUs, for peer_copy_bench's sizes (issue 46).

    python3 bench/device/torch_peer_copy.py [--iterations N] [--from A] [--to B]

For each size (1 MiB to 1 GiB) and direction: `tensor.to("cuda:B")` (a new tensor each time, from the caching
allocator) and `destination.copy_(source, non_blocking=True)` into a preallocated tensor, about 4 GiB of copies a round (as
peer_copy_bench) back to back and then synchronised, best of 3 rounds. Prints one JSON line per size and direction, GB/s of each, as peer_copy_bench does.
"""

import argparse
import json
import time

import torch


def timed(run, synchronize):
    start = time.perf_counter()
    run()
    synchronize()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--from", dest="first", type=int, default=0)
    parser.add_argument("--to", dest="second", type=int, default=1)
    args = parser.parse_args()
    for size in (1 << 20, 16 << 20, 256 << 20, 1 << 30):
        for forward in (True, False):
            source_gpu, target_gpu = (args.first, args.second) if forward else (args.second, args.first)
            source = torch.ones(size, dtype=torch.uint8, device=f"cuda:{source_gpu}")
            destination = torch.empty(size, dtype=torch.uint8, device=f"cuda:{target_gpu}")
            count = min(max((4 << 30) // size, args.iterations // 4, 2), 500)  # as peer_copy_bench: ~4 GiB a round

            def synchronize():
                torch.cuda.synchronize(source_gpu)
                torch.cuda.synchronize(target_gpu)

            def to_device():
                for _ in range(count):
                    source.to(f"cuda:{target_gpu}")

            def copy_into():
                for _ in range(count):
                    destination.copy_(source, non_blocking=True)

            timed(to_device, synchronize)
            timed(copy_into, synchronize)
            best_to = min(timed(to_device, synchronize) for _ in range(3))
            best_copy = min(timed(copy_into, synchronize) for _ in range(3))
            moved = size * count / 1e9
            print(json.dumps({"bench": "torch_peer_copy", "from": f"cuda:{source_gpu}", "to": f"cuda:{target_gpu}",
                              "bytes": size, "copies": count, "to_gbps": round(moved / best_to, 1),
                              "copy_gbps": round(moved / best_copy, 1), "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
