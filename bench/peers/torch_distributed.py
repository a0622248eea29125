#!/usr/bin/env python3
"""The peer of bench/libs/collective/collective_bench.cpp: torch.distributed with NCCL on every GPU of the machine, or
on as many as the first argument says (mp.spawn, one process a GPU; or torchrun:
`torchrun --nproc-per-node=2 bench/peers/torch_distributed.py`), the same sizes and the same CSV
(op,bytes,time_us,algbw_gbps,busbw_gbps), printed by rank 0. Each size: 5 warm-up calls, then `iterations` calls
back to back and one synchronisation; time is the mean per call."""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def timed(fn, iterations):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iterations * 1e6


def row(op, nbytes, us, factor):
    algbw = nbytes / (us * 1e3)
    print(f"{op},{nbytes},{us:.2f},{algbw:.2f},{algbw * factor:.2f}", flush=True)


def main(rank, world):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    n = float(world)
    big = torch.ones((1 << 30) // 4, device="cuda")
    out = torch.empty_like(big)
    if rank == 0:
        print("op,bytes,time_us,algbw_gbps,busbw_gbps", flush=True)
    nbytes = 4
    while nbytes <= 1 << 30:
        x = big[: nbytes // 4]
        iterations = 1000 if nbytes <= 1 << 20 else 100 if nbytes <= 64 << 20 else 20
        us = timed(lambda: dist.all_reduce(x), iterations)
        if rank == 0:
            row("all_reduce", nbytes, us, 2 * (n - 1) / n)
        nbytes *= 4
    for nbytes in (16 << 20, 256 << 20):
        part = nbytes // 4 // world
        iterations = 200 if nbytes <= 16 << 20 else 50
        us = timed(lambda: dist.all_gather_into_tensor(out[: part * world], big[:part]), iterations)
        if rank == 0:
            row("all_gather", nbytes, us, (n - 1) / n)
        us = timed(lambda: dist.reduce_scatter_tensor(out[:part], big[: part * world]), iterations)
        if rank == 0:
            row("reduce_scatter", nbytes, us, (n - 1) / n)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" in os.environ:
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        world = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
        mp.spawn(main, args=(world,), nprocs=world)
