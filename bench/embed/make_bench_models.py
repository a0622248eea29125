"""Full-size models of the families embed::Model runs, with random weights (transformers, fixed seed), for the
benchmarks on the GPU machine (no checkpoint of that size can be had offline):

  bert_base_mean      a sentence-transformers folder: BERT 12 layers x 768 (bert-base's config), mean pooling,
                      Normalize, max_seq_length 256, with all-MiniLM-L6-v2's WordPiece tokenizer
  bert_base_reranker  BertForSequenceClassification (one label) of the same config: a cross-encoder

    python3 bench/embed/make_bench_models.py OUT_DIR --tokenizer-from .deps/models/all-MiniLM-L6-v2
"""
import argparse
import pathlib
import shutil

import torch
import transformers
from sentence_transformers import SentenceTransformer, models

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]


def config():
    return transformers.BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                   intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2)


def copy_tokenizer(source, folder):
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copy(source / name, folder / name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tokenizer-from", type=pathlib.Path, required=True)
    args = parser.parse_args()
    torch.manual_seed(20261128)
    base = args.out / "bert_base_transformer"
    transformers.BertModel(config()).save_pretrained(base)
    copy_tokenizer(args.tokenizer_from, base)
    st = SentenceTransformer(modules=[models.Transformer(str(base), max_seq_length=256),
                                      models.Pooling(768, pooling_mode="mean"), models.Normalize()], device="cpu")
    st.save(str(args.out / "bert_base_mean"))
    shutil.rmtree(base)
    # vocab.txt, which embed_bench draws words from; the tokenizer_config.json sentence-transformers wrote (its
    # model_max_length is the folder's max_seq_length) stays.
    shutil.copy(args.tokenizer_from / "vocab.txt", args.out / "bert_base_mean" / "vocab.txt")
    cfg = config()
    cfg.num_labels = 1
    reranker = args.out / "bert_base_reranker"
    transformers.BertForSequenceClassification(cfg).save_pretrained(reranker)
    copy_tokenizer(args.tokenizer_from, reranker)


if __name__ == "__main__":
    main()
