#!/usr/bin/env python3
"""Would FP8 matmuls pay in an encoder, and keep its embeddings? Asked of PyTorch on the GPU before accel builds them,
one JSON line per figure:

  matmul    x Wᵀ at an encoder's shapes (16,384 rows): torch.mm in f16 (cuBLASLt) against torch._scaled_mm with e4m3
            operands, x scaled per row and W per output column (bf16 out); CUDA events, median of 50 runs
  accuracy  the folder's embeddings of the trace's texts (mean pooling, L2 normalised) with some linears in FP8, x's
            scale per row computed at run time and W's per channel once, against the same model in f32: min and mean
            cosine, how many below 0.999. The sets: none (plain f16), the linears whose input is a LayerNorm's output
            (q, k, v and the FFN's up: a LayerNorm could write its row in e4m3 with its scale), and every linear.

  python3 bench/peers/fp8_encoder_probe.py [--model FOLDER --trace T] [--shapes 1152:384 3072:768 ...]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F
from gpu_figures import emit
from transformers import AutoModel, AutoTokenizer

E4M3_MAX = 448.0


def quantize_rows(x):
    """e4m3 values and the f32 scale of each row (row = value * scale)."""
    scale = x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / E4M3_MAX
    return (x.float() / scale).to(torch.float8_e4m3fn), scale


def scaled_product(xq, xs, wq, ws):
    return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws.t(), out_dtype=torch.bfloat16)


class Fp8Linear(torch.nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.wq, self.ws = quantize_rows(linear.weight.detach())
        self.bias = linear.bias

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        padded = -rows.shape[0] % 16  # _scaled_mm takes rows in multiples of 16
        if padded:
            rows = torch.cat([rows, rows.new_zeros(padded, rows.shape[1])])
        xq, xs = quantize_rows(rows)
        y = scaled_product(xq, xs, self.wq, self.ws)[: rows.shape[0] - padded].to(x.dtype)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], -1)


LAYERNORM_FED = ("attention.self.query", "attention.self.key", "attention.self.value", "intermediate.dense")


def with_fp8(model, names):
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if isinstance(child, torch.nn.Linear) and ".layer." in full and (
                    names == "all" or any(full.endswith(n) for n in names)):
                setattr(module, child_name, Fp8Linear(child))
    return model


def embeddings(model, batches):
    out = []
    for batch in batches:
        hidden = model(**batch).last_hidden_state.float()
        mask = batch["attention_mask"].unsqueeze(-1).float()
        out.append(F.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1))
    return torch.cat(out)


def timed_ms(fn, runs=50):
    for _ in range(5):
        fn()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def matmuls(shapes, rows):
    for shape in shapes:
        n, k = (int(v) for v in shape.split(":"))
        x = torch.randn(rows, k, device="cuda", dtype=torch.float16)
        w = torch.randn(n, k, device="cuda", dtype=torch.float16) / k ** 0.5
        xq, xs = quantize_rows(x)
        wq, ws = quantize_rows(w)
        f16 = timed_ms(lambda: torch.mm(x, w.t()))
        fp8 = timed_ms(lambda: scaled_product(xq, xs, wq, ws))
        flops = 2.0 * rows * n * k
        error = (scaled_product(xq, xs, wq, ws).float() - x.float() @ w.float().t()).norm() / (
            x.float() @ w.float().t()).norm()
        emit({"figure": "matmul", "rows": rows, "out": n, "in": k, "f16_us": f16 * 1e3, "fp8_rowwise_us": fp8 * 1e3,
              "f16_tflops": flops / f16 / 1e9, "fp8_tflops": flops / fp8 / 1e9, "fp8_over_f16": f16 / fp8,
              "fp8_relative_error": float(error)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="the encoder folder whose accuracy to check (none: the matmuls only)")
    parser.add_argument("--trace", help="embed_bench --trace output: the texts of the accuracy check")
    parser.add_argument("--texts", type=int, default=4096)
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--shapes", nargs="*", default=[], help="OUT:IN of each matmul to time")
    args = parser.parse_args()
    with torch.inference_mode():
        matmuls(args.shapes, args.rows)
        if not args.model:
            return
        texts = [json.loads(line)["text"] for line in open(args.trace)][: args.texts]
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        batches = [tokenizer(texts[i:i + 128], padding=True, truncation=True, max_length=256,
                             return_tensors="pt").to("cuda") for i in range(0, len(texts), 128)]
        reference = embeddings(AutoModel.from_pretrained(args.model, torch_dtype=torch.float32).cuda().eval(), batches)
        for names in ((), LAYERNORM_FED, "all"):
            model = with_fp8(AutoModel.from_pretrained(args.model, torch_dtype=torch.float16).cuda().eval(), names)
            cosine = (embeddings(model, batches) * reference).sum(1)
            emit({"figure": "accuracy", "model": args.model, "fp8_linears": names if names == "all" else list(names),
                  "texts": len(texts), "min_cosine": float(cosine.min()), "mean_cosine": float(cosine.mean()),
                  "below_0.999": int((cosine < 0.999).sum())})


if __name__ == "__main__":
    main()
