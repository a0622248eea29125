"""Full-size models of the families embed::Model runs, with random weights (transformers, fixed seed), for the
benchmarks on the GPU machine (no checkpoint of that size can be had offline):

  bert_base_mean      a sentence-transformers folder: BERT 12 layers x 768 (bert-base's config), mean pooling,
                      Normalize, max_seq_length 256, with all-MiniLM-L6-v2's WordPiece tokenizer
  bert_base_reranker  BertForSequenceClassification (one label) of the same config: a cross-encoder
  minilm_mean         a sentence-transformers folder of all-MiniLM-L6-v2's shape (BERT 6 layers x 384, 12 heads,
                      1,536 inner), mean pooling, Normalize, max_seq_length 256, the same tokenizer
                      (bench/serve/mixed_models serves it beside the other two)
  qwen3_0_6b_lasttoken  with --decoder: a sentence-transformers folder of Qwen3-Embedding-0.6B's config (Qwen3 28
                      layers x 1,024, 16 query and 8 key/value heads of 128, 3,072 inner, tied embeddings), last-token
                      pooling, Normalize, max_seq_length 256, with the byte-level BPE tokenizer of the tests
                      (tests/text/data/qwen_bpe: 4,004 pieces; the real one, 151,669, is not to be had offline) and
                      the MiniLM vocabulary's words for embed_bench's trace
  modernbert_base_mean  a sentence-transformers folder of ModernBERT-base's config (the base of modernbert-embed-base
                      and gte-modernbert-base: 22 layers x 768, 12 heads, GeGLU of 1,152, no biases, every third
                      layer global and the others a 128-token window, rotary bases 160,000 / 10,000), mean pooling,
                      Normalize, max_seq_length 256, with all-MiniLM-L6-v2's WordPiece tokenizer (its own seed, made
                      last, so the folders above keep their weights)

    python3 bench/embed/make_bench_models.py OUT_DIR --tokenizer-from .deps/models/all-MiniLM-L6-v2 [--decoder]
"""
import argparse
import inspect
import pathlib
import shutil

import torch
import transformers
from sentence_transformers import SentenceTransformer, models

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]


def config(hidden=768, layers=12, inner=3072):
    return transformers.BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers,
                                   num_attention_heads=12, intermediate_size=inner, max_position_embeddings=512,
                                   type_vocab_size=2)


def copy_tokenizer(source, folder):
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copy(source / name, folder / name)


def sentence_transformers_folder(args, base, hidden, pooling, name):
    """args.out/name: the transformers folder `base` (then removed) with `pooling` and Normalize, cut at 256 tokens,
    and MiniLM's vocab.txt, which embed_bench draws its words from (the tokenizer_config.json sentence-transformers
    wrote, whose model_max_length is the folder's max_seq_length, stays)."""
    st = SentenceTransformer(modules=[models.Transformer(str(base), max_seq_length=256),
                                      models.Pooling(hidden, pooling_mode=pooling), models.Normalize()],
                             device="cpu")
    st.save(str(args.out / name))
    shutil.rmtree(base)
    shutil.copy(args.tokenizer_from / "vocab.txt", args.out / name / "vocab.txt")


def embedder(args, cfg, name):
    """A sentence-transformers folder args.out/name: a BertModel of `cfg`, mean pooling, Normalize."""
    base = args.out / f"{name}_transformer"
    transformers.BertModel(cfg).save_pretrained(base)
    copy_tokenizer(args.tokenizer_from, base)
    sentence_transformers_folder(args, base, cfg.hidden_size, "mean", name)


def qwen3_embedder(args):
    """Qwen3-Embedding-0.6B's configuration with random weights, as a sentence-transformers folder."""
    cfg = transformers.Qwen3Config(vocab_size=151669, hidden_size=1024, num_hidden_layers=28, num_attention_heads=16,
                                   num_key_value_heads=8, head_dim=128, intermediate_size=3072,
                                   max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
                                   tie_word_embeddings=True, pad_token_id=4000, bos_token_id=4000, eos_token_id=4000)
    base = args.out / "qwen3_transformer"
    transformers.Qwen3Model(cfg).save_pretrained(base)
    tokenizer_folder = pathlib.Path(__file__).resolve().parents[2] / "tests/embed/data/families/qwen3_lasttoken_prompts"
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(tokenizer_folder / name, base / name)
    sentence_transformers_folder(args, base, cfg.hidden_size, "lasttoken", "qwen3_0_6b_lasttoken")


def modernbert_embedder(args):
    """ModernBERT-base's configuration with random weights, as a sentence-transformers folder."""
    common = dict(vocab_size=30522, hidden_size=768, intermediate_size=1152, num_hidden_layers=22,
                  num_attention_heads=12, max_position_embeddings=8192, hidden_activation="gelu",
                  global_attn_every_n_layers=3, local_attention=128, norm_eps=1e-5, norm_bias=False,
                  attention_bias=False, mlp_bias=False, pad_token_id=0, cls_token_id=101, bos_token_id=101,
                  sep_token_id=102, eos_token_id=102)
    # transformers 5 takes the two rotary bases per layer type; 4.x as global_rope_theta and local_rope_theta.
    if "rope_parameters" in inspect.signature(transformers.ModernBertConfig.__init__).parameters:
        common["rope_parameters"] = {"full_attention": {"rope_type": "default", "rope_theta": 160000.0},
                                     "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}
    else:
        common.update(global_rope_theta=160000.0, local_rope_theta=10000.0)
    cfg = transformers.ModernBertConfig(**common)
    base = args.out / "modernbert_transformer"
    transformers.ModernBertModel(cfg).save_pretrained(base)
    copy_tokenizer(args.tokenizer_from, base)
    sentence_transformers_folder(args, base, cfg.hidden_size, "mean", "modernbert_base_mean")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tokenizer-from", type=pathlib.Path, required=True)
    parser.add_argument("--decoder", action="store_true", help="also qwen3_0_6b_lasttoken (after the others)")
    args = parser.parse_args()
    torch.manual_seed(20261128)
    embedder(args, config(), "bert_base_mean")
    cfg = config()
    cfg.num_labels = 1
    reranker = args.out / "bert_base_reranker"
    transformers.BertForSequenceClassification(cfg).save_pretrained(reranker)
    copy_tokenizer(args.tokenizer_from, reranker)
    # After the two above, so that their weights stay those of the runs already recorded (same seed, same order).
    embedder(args, config(hidden=384, layers=6, inner=1536), "minilm_mean")
    if args.decoder:
        qwen3_embedder(args)
    torch.manual_seed(20261202)
    modernbert_embedder(args)


if __name__ == "__main__":
    main()
