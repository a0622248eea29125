"""The PyTorch peer of bench/graph/graph_attention_bench.cpp: the same packed attention on the same GPU.

128 sequences of 16 + (97 i mod 241) tokens (16..256) packed end to end, Q/K/V column slices of one fused
[rows, (heads + 2 kv_heads) * head_dim] buffer: the encoders' cases, and the decoder's causal grouped-query case
(16 query and 8 key/value heads of 128, bf16; flash-varlen only, which takes the 8 key/value heads as they are).
PyTorch has no packed SDPA over such slices, so each variant is timed on the layout it needs, prepared outside the
timed region:
  padded-mask   F.scaled_dot_product_attention on [128, heads, 256, d] padded with a boolean key mask;
  nested        SDPA on jagged nested tensors (torch.nested, layout=torch.jagged): the flash varlen path;
  flash-varlen  torch.ops.aten._flash_attention_forward on the packed rows with cumulative offsets.
Prints CSV rows part,case,variant,metric,value. Timing as in the C++ benchmark: `reps` calls back to back between
two CUDA events, per call, the median of 7 rounds after a warm-up.
"""
import math
import statistics

import torch
import torch.nn.functional as F

SEQUENCES = 128


def row(case, variant, metric, value):
    print(f"attention,{case},{variant},{metric},{value:.3f}", flush=True)


def median_us(fn, reps=50):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(7):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        rounds.append(start.elapsed_time(stop) * 1e3 / reps)
    return statistics.median(rounds)


def run(dtype, name, heads, d, kv_heads=None, causal=False):
    kv_heads = kv_heads or heads
    lengths = [16 + (97 * i) % 241 for i in range(SEQUENCES)]
    offsets = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)), dtype=torch.int32, device="cuda")
    rows, longest = sum(lengths), max(lengths)
    flops = sum((2.0 * n * (n + 1) if causal else 4.0 * n * n) * d * heads for n in lengths)
    qkv = torch.rand(rows, heads + 2 * kv_heads, d, device="cuda", dtype=dtype) * 2 - 1
    q, k, v = qkv.split([heads, kv_heads, kv_heads], dim=1)  # [rows, heads, d] views with the fused row stride
    scale = 1.0 / math.sqrt(d)
    case = f"s{SEQUENCES} h{heads} d{d} {name}"
    if causal:
        case = f"s{SEQUENCES} h{heads}/{kv_heads} d{d} causal {name}"

    def report(variant, fn):
        try:
            us = median_us(fn)
        except (RuntimeError, TypeError, AttributeError) as error:
            print(f"# {variant} {case}: {str(error).splitlines()[0]}", flush=True)
            return
        row(case, variant, "us", us)
        row(case, variant, "tflops", flops / (us * 1e6))

    if not causal:
        padded = [torch.zeros(SEQUENCES, longest, heads, d, device="cuda", dtype=dtype) for _ in range(3)]
        for tensor, source in zip(padded, (q, k, v)):
            for s, n in enumerate(lengths):
                tensor[s, :n] = source[offsets[s]: offsets[s] + n]
        pq, pk, pv = (t.transpose(1, 2) for t in padded)
        mask = torch.arange(longest, device="cuda")[None, :] < torch.tensor(lengths, device="cuda")[:, None]
        mask = mask[:, None, None, :]
        report("padded-mask", lambda: F.scaled_dot_product_attention(pq, pk, pv, attn_mask=mask, scale=scale))

    if dtype != torch.float32:
        if not causal:
            nested = [torch.nested.nested_tensor_from_jagged(t.contiguous(), offsets.long()).transpose(1, 2)
                      for t in (q, k, v)]
            report("nested", lambda: F.scaled_dot_product_attention(*nested, scale=scale))
        report("flash-varlen", lambda: torch.ops.aten._flash_attention_forward(
            q, k, v, offsets, offsets, longest, longest, 0.0, causal, False, scale=scale))


def main():
    for dtype, name in ((torch.float16, "f16"), (torch.bfloat16, "bf16"), (torch.float32, "f32")):
        for d in (32, 64):
            run(dtype, name, 12, d)
    run(torch.bfloat16, "bf16", 16, 128, kv_heads=8, causal=True)


if __name__ == "__main__":
    main()
