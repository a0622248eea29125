"""Embedding a dataset with Ray Data and accel: `map_batches` with a class that loads accel.embed.Model once per Ray
actor (on the GPU Ray gives it, or the CPU) and embeds each batch of texts, which is how a batch job scales past one
machine. The result is checked against one `encode` of every text in this process.

    python ray_embed.py --model FOLDER [--texts FILE] [--workers 2] [--gpus-per-worker 1] [--device cpu|cuda]

`--texts` is a file of one text per line (default: a few hundred sentences in several scripts made here). Where Ray
is not installed, the same class is called on the same batches in this process (what each Ray actor does with the
batches it is given), and the script says so.
"""

import argparse

import numpy as np

import accel


class AccelEmbedder:
    """Ray Data's map_batches calls this with a dict of NumPy columns and keeps the dict it returns."""

    def __init__(self, folder, device_kind):
        self.model = accel.embed.Model(folder, device=accel.Device.open(device_kind))

    def __call__(self, batch):
        batch["embedding"] = self.model.encode([str(text) for text in batch["text"]], batch_size=64,
                                               normalize_embeddings=True)
        return batch


SAMPLES = ["The cat sat on the mat.", "Stock markets fell sharply on Monday.", "東京は日本の首都です。",
           "Der schnelle braune Fuchs springt über den faulen Hund.", "Привет, как дела?",
           "La tour Eiffel se trouve à Paris.", "مرحبا بالعالم", "A very long sentence " * 40,
           "🙂 emoji and ünïcödé", "Quantum computers use qubits."]


def read_texts(path):
    if path:
        with open(path, encoding="utf-8") as lines:
            return [line.rstrip("\n") for line in lines if line.strip()]
    return [f"{text} ({i})" for i in range(40) for text in SAMPLES]


def embed_with_ray(ray, texts, args):
    ray.init(ignore_reinit_error=True)
    dataset = ray.data.from_items([{"text": text} for text in texts])
    gpus = args.gpus_per_worker if args.device == "cuda" else 0
    embedded = dataset.map_batches(AccelEmbedder, fn_constructor_args=(args.model, args.device), batch_size=256,
                                   compute=ray.data.ActorPoolStrategy(size=args.workers), num_gpus=gpus)
    rows = embedded.take_all()
    by_text = {row["text"]: np.asarray(row["embedding"]) for row in rows}  # Ray may reorder rows
    return np.stack([by_text[text] for text in texts]), f"Ray Data, {args.workers} workers"


def embed_in_process(texts, args):
    embedder = AccelEmbedder(args.model, args.device)
    batches = [{"text": np.array(texts[first:first + 256], dtype=object)} for first in range(0, len(texts), 256)]
    rows = np.concatenate([embedder(batch)["embedding"] for batch in batches])
    return rows, "Ray not installed: the batches in this process"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--texts")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--gpus-per-worker", type=float, default=1)
    parser.add_argument("--device", default="cuda" if accel.Device.default().kind == "cuda" else "cpu")
    args = parser.parse_args()
    texts = read_texts(args.texts)
    try:
        import ray
    except ImportError:
        ray = None
    rows, how = embed_with_ray(ray, texts, args) if ray else embed_in_process(texts, args)
    reference = accel.embed.Model(args.model, device=accel.Device.open(args.device)).encode(
        texts, normalize_embeddings=True)
    cosine = float(np.min(np.sum(rows * reference, axis=1)))
    assert rows.shape == reference.shape and cosine > 0.9999, (rows.shape, cosine)
    print(f"{len(texts)} texts embedded ({how}): {rows.shape[1]} dimensions, min cosine to one encode {cosine:.6f}")


if __name__ == "__main__":
    main()
