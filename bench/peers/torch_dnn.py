"""The PyTorch peer of bench/dnn/cudnn_bench.cpp: the same convolutions and attention on the same GPU.

Prints CSV rows part,case,variant,metric,value with variant "pytorch". Timing as in the C++ benchmark: `reps`
calls back to back, wall clock until torch.cuda.synchronize() returns, divided by `reps`, best of 5.
cudnn.benchmark stays off (PyTorch's default), as accel uses cuDNN's heuristics' first choice.
"""
import sys
import time

import torch
import torch.nn.functional as F

RESNET = [
    ("stem 7x7/2 3-64", 3, 64, 224, 7, 2, 3),
    ("3x3 64 56", 64, 64, 56, 3, 1, 1),
    ("3x3 128 28", 128, 128, 28, 3, 1, 1),
    ("3x3 256 14", 256, 256, 14, 3, 1, 1),
    ("3x3 512 7", 512, 512, 7, 3, 1, 1),
    ("1x1 256-64 56", 256, 64, 56, 1, 1, 0),
    ("1x1 64-256 56", 64, 256, 56, 1, 1, 0),
]


def row(part, case, metric, value):
    print(f"{part},{case},pytorch,{metric},{value:.3f}", flush=True)


def steady_us(fn, reps):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) * 1e6 / reps)
    return best


def conv_inputs(c, k, hw, f, dtype):
    x = (torch.rand(32, c, hw, hw, device="cuda", dtype=dtype) * 2 - 1).to(memory_format=torch.channels_last)
    w = (torch.rand(k, c, f, f, device="cuda", dtype=dtype) * 2 - 1).to(memory_format=torch.channels_last)
    bias = torch.rand(1, k, 1, 1, device="cuda", dtype=dtype) * 2 - 1
    return x, w, bias


def resnet():
    # TF32 as cuDNN's heuristics may pick it for f32 in accel too (PyTorch's default for convolutions).
    torch.backends.cudnn.allow_tf32 = True
    for dtype, name in ((torch.float16, "f16"), (torch.float32, "f32")):
        for case, c, k, hw, f, stride, pad in RESNET:
            x, w, _ = conv_inputs(c, k, hw, f, dtype)
            us = steady_us(lambda: F.conv2d(x, w, stride=stride, padding=pad), 50)
            out = (hw + 2 * pad - f) // stride + 1
            row("resnet", f"{case} {name}", "us", us)
            row("resnet", f"{case} {name}", "tflops", 2.0 * 32 * k * out * out * c * f * f / (us * 1e6))


def fused():
    for case, c, k, hw, f, stride, pad in RESNET:
        x, w, bias = conv_inputs(c, k, hw, f, torch.float16)
        us = steady_us(lambda: torch.relu(F.conv2d(x, w, stride=stride, padding=pad) + bias), 50)
        row("fused", f"{case} f16", "us", us)


def attention():
    q, k, v = (torch.rand(8, 16, 2048, 128, device="cuda", dtype=torch.bfloat16) * 2 - 1 for _ in range(3))
    us = steady_us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), 50)
    case = "b8 h16 s2048 d128 causal"
    row("attention", case, "us", us)
    row("attention", case, "tflops", 4.0 * 8 * 16 * 2048 * 2048 * 128 / 2 / (us * 1e6))


def plans():
    # A tiny convolution: the host cost of one call.
    x, w, _ = conv_inputs(8, 8, 1, 1, torch.float16)
    x, w = x[:1], w
    row("plans", "tiny 1x1", "request_us", steady_us(lambda: F.conv2d(x, w), 2000))


if __name__ == "__main__":
    parts = sys.argv[1] if len(sys.argv) > 1 else "plans,resnet,fused,attention"
    print(f"# torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}",
          file=sys.stderr)
    for part in ("plans", "resnet", "fused", "attention"):
        if part in parts:
            globals()[part]()
