#!/usr/bin/env python3
"""Reference embeddings of all-MiniLM-L6-v2 for accel's embedding tests.

Runs the model folder with sentence-transformers in f32 on the CPU (the CPU, so that the numbers do not depend on
a GPU's kernels or TF32) and writes, for each sentence, its token count and its embedding at full precision.

    python3 make_reference_embeddings.py MODEL_FOLDER OUTPUT.json
"""

import hashlib
import json
import platform
import sys
from pathlib import Path

import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer

# Short and long, cased and not, punctuation, numbers, accents (composed and decomposed), scripts WordPiece splits
# per character (CJK) or maps to [UNK], emoji, whitespace oddities, and the empty string. The long ones run past
# max_seq_length (256 tokens) so that truncation is exercised.
LONG_ENGLISH = " ".join(
    f"Sentence number {i} talks about the weather, the markets and the train that was late again." for i in range(30)
)
LONG_WORDS = " ".join(f"word{i}" for i in range(400))

SENTENCES = [
    "",
    "a",
    "Hello, world!",
    "hello world",
    "HELLO WORLD",
    "The quick brown fox jumps over the lazy dog.",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
    "Someone in a gorilla costume is playing a set of drums.",
    "What is the capital of France?",
    "Paris is the capital and most populous city of France.",
    "GPU kernels fuse the bias, the GELU and the residual add into one pass over memory.",
    "The price rose 3.5% to $1,234.56 on 2024-03-01 at 09:30.",
    "e-mail: someone@example.com, url: https://example.com/a/b?c=d#e",
    "Café naïve résumé déjà vu, coöperate, señor, Ångström.",
    "Cafe\u0301 with a combining accent",
    "Straße und Größe in München",
    "Γειά σου κόσμε",
    "Привет, мир! Как дела?",
    "مرحبا بالعالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "你好，世界！今天天气很好。",
    "東京は日本の首都です。",
    "안녕하세요 세계",
    "I love this 😀🎉👍🏽 so much!",
    "🇫🇷🇯🇵👨‍👩‍👧‍👦",
    "tabs\tand\nnewlines\r\nand   many    spaces",
    "   leading and trailing whitespace   ",
    "!!!???...,,,;;;:::",
    "unbelievably antidisestablishmentarianism supercalifragilisticexpialidocious",
    "x" * 300,
    LONG_ENGLISH,
    LONG_WORDS,
]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main() -> None:
    folder, output = Path(sys.argv[1]), Path(sys.argv[2])
    torch.manual_seed(0)
    model = SentenceTransformer(str(folder), device="cpu")
    model = model.float().eval()
    features = model.tokenize(SENTENCES)
    tokens = features["attention_mask"].sum(dim=1).tolist()
    with torch.inference_mode():
        embeddings = model.encode(SENTENCES, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
    assert embeddings.dtype.name == "float32", embeddings.dtype
    document = {
        "model": folder.name,
        "model_safetensors_sha256": sha256(folder / "model.safetensors"),
        "max_seq_length": model.max_seq_length,
        "dimensions": int(embeddings.shape[1]),
        "device": "cpu",
        "dtype": "float32",
        "versions": {
            "python": platform.python_version(),
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
        },
        # float(x) of a float32 is exact, and json writes the shortest repr that reads back as the same double.
        "embeddings": [
            {"sentence": s, "tokens": int(t), "embedding": [float(x) for x in e]}
            for s, t, e in zip(SENTENCES, tokens, embeddings)
        ],
    }
    output.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(SENTENCES)} sentences, tokens {tokens}, written to {output}")


if __name__ == "__main__":
    main()
