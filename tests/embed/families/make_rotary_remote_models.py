"""Tiny NomicBert and GTE models and their reference embeddings. Both families are remote code on the Hub, not in
transformers, so this file holds a small PyTorch reference of each, written from the published modeling files:

  - NomicBert: nomic-ai/contrastors, src/contrastors/models/huggingface/modeling_hf_nomic_bert.py (NomicBertModel,
    the code nomic-embed-text-v1/v1.5 load): embeddings (words + token type 0) and emb_ln; per block a fused Wqkv
    (rows q, k, v), rotary q and k (NomicBertRotaryEmbedding, not interleaved, every column), softmax(q k^T /
    sqrt(head_dim)) v, out_proj, norm1(x + attention); the gated MLP fc2(fc11(x) * act(fc12(x))), norm2(x + mlp)
    (prenorm false); its width n_inner rounded up to a multiple of 256 and the vocabulary to pad_vocab_size_multiple
    as NomicBertModel does;
  - GTE: Alibaba-NLP/new-impl, modeling.py (NewModel, model_type "new", the code of gte-*-v1.5 and
    gte-multilingual-base): embeddings (words + token types where type_vocab_size > 0) and LayerNorm; per layer a
    fused qkv_proj, RotaryEmbedding (rotate-half; NTKScalingRotaryEmbedding's fixed NTK scaling), o_proj, attn_ln(x + attention); NewGatedMLP
    down_proj(act(gate) * up) with [up, gate] the halves of up_gate_proj (no bias), mlp_ln(x + mlp).

Weights are random (fixed seeds, linear layers drawn 0.2 wide as the ModernBERT models are, LayerNorms and biases
random too), saved as the remote code saves them (config.json with its real field names, model.safetensors), with
the committed WordPiece tokenizer of bert_mean_dense_norm and the sentence-transformers 6 files of the ModernBERT
models around them (those files do not depend on the architecture). References are each text alone through the
reference model in float32, truncated at max_seq_length as sentence-transformers truncates.

    python tests/embed/families/make_rotary_remote_models.py OUT_DIR [--merge tests/embed/data/families]

writes OUT_DIR/<model>/ (four sentence-transformers folders, and gte_reranker: a bare NewForSequenceClassification
checkpoint, scored over references.json's queries and passages) and OUT_DIR/references.json; with --merge, copies the folders into that directory and adds
their references (and versions_rotary_remote) to its references.json. Needs torch, safetensors and tokenizers."""

import argparse
import json
import math
import pathlib
import shutil

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from torch import nn

HERE = pathlib.Path(__file__).resolve().parent
FAMILIES = HERE.parent / "data" / "families"
HIDDEN, HEADS, LAYERS, INNER, POSITIONS, MAX_SEQ, INIT = 32, 4, 2, 64, 64, 48, 0.2


def rotate(x, theta, ntk_factor=None):
    """x [tokens, heads, head_dim] rotated at positions 0.. as both modeling files do (halves, fp32 frequencies);
    with GTE's NTK factor as its NTKScalingRotaryEmbedding (mixed_b None) rotates at every position."""
    dim = x.shape[-1]
    base = theta * ntk_factor if ntk_factor else theta
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    if ntk_factor:
        inv_freq = inv_freq / ntk_factor ** (2 / dim)
    freqs = torch.outer(torch.arange(x.shape[0], dtype=torch.float32), inv_freq)
    cos, sin = torch.cat([freqs.cos(), freqs.cos()], -1)[:, None], torch.cat([freqs.sin(), freqs.sin()], -1)[:, None]
    half = torch.cat([-x[..., dim // 2:], x[..., :dim // 2]], -1)
    return x * cos + half * sin


def attend(qkv, heads, theta, ntk_factor=None):
    """qkv [tokens, 3 * hidden] (q, k, v of every head) -> [tokens, hidden]: bidirectional softmax attention."""
    tokens, width = qkv.shape[0], qkv.shape[1] // 3
    q, k, v = (t.reshape(tokens, heads, width // heads) for t in qkv.split(width, -1))
    q, k = rotate(q, theta, ntk_factor), rotate(k, theta, ntk_factor)
    scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(width // heads)
    return torch.einsum("hqk,khd->qhd", scores.softmax(-1), v).reshape(tokens, width)


class NomicBlock(nn.Module):
    def __init__(self, c, inner):
        super().__init__()
        self.attn = nn.Module()
        self.attn.Wqkv = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["qkv_proj_bias"])
        self.attn.out_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["qkv_proj_bias"])
        self.mlp = nn.Module()
        self.mlp.fc11 = nn.Linear(c["n_embd"], inner, bias=c["mlp_fc1_bias"])
        self.mlp.fc12 = nn.Linear(c["n_embd"], inner, bias=c["mlp_fc1_bias"])
        self.mlp.fc2 = nn.Linear(inner, c["n_embd"], bias=c["mlp_fc2_bias"])
        self.norm1 = nn.LayerNorm(c["n_embd"], eps=c["layer_norm_epsilon"])
        self.norm2 = nn.LayerNorm(c["n_embd"], eps=c["layer_norm_epsilon"])
        self.act = {"swiglu": nn.functional.silu, "geglu": nn.functional.gelu}[c["activation_function"]]
        self.heads, self.theta = c["n_head"], c["rotary_emb_base"]

    def forward(self, x):
        x = self.norm1(self.attn.out_proj(attend(self.attn.Wqkv(x), self.heads, self.theta)) + x)
        return self.norm2(self.mlp.fc2(self.mlp.fc11(x) * self.act(self.mlp.fc12(x))) + x)


class NomicBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        multiple = c.get("pad_vocab_size_multiple", 1)
        vocab = (c["vocab_size"] + multiple - 1) // multiple * multiple
        inner = (c["n_inner"] + 255) // 256 * 256
        self.embeddings = nn.Module()
        self.embeddings.word_embeddings = nn.Embedding(vocab, c["n_embd"])
        self.embeddings.token_type_embeddings = nn.Embedding(c["type_vocab_size"], c["n_embd"])
        self.emb_ln = nn.LayerNorm(c["n_embd"], eps=c["layer_norm_epsilon"])
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList(NomicBlock(c, inner) for _ in range(c["n_layer"]))

    def forward(self, ids):
        x = self.embeddings.word_embeddings(ids) + self.embeddings.token_type_embeddings(torch.zeros_like(ids))
        x = self.emb_ln(x)
        for layer in self.encoder.layers:
            x = layer(x)
        return x


class NewLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        hidden, inner = c["hidden_size"], c["intermediate_size"]
        self.attention = nn.Module()
        self.attention.qkv_proj = nn.Linear(hidden, 3 * hidden)
        self.attention.o_proj = nn.Linear(hidden, hidden)
        self.mlp = nn.Module()
        self.mlp.up_gate_proj = nn.Linear(hidden, 2 * inner, bias=False)
        self.mlp.down_proj = nn.Linear(inner, hidden)
        self.attn_ln = nn.LayerNorm(hidden, eps=c["layer_norm_eps"])
        self.mlp_ln = nn.LayerNorm(hidden, eps=c["layer_norm_eps"])
        self.act = {"gelu": nn.functional.gelu, "silu": nn.functional.silu}[c["hidden_act"]]
        self.heads, self.theta, self.inner = c["num_attention_heads"], c["rope_theta"], inner
        scaling = c["rope_scaling"]
        self.ntk_factor = scaling["factor"] if scaling and scaling["factor"] > 1 else None

    def forward(self, x):
        attention = attend(self.attention.qkv_proj(x), self.heads, self.theta, self.ntk_factor)
        x = self.attn_ln(x + self.attention.o_proj(attention))
        up, gate = self.mlp.up_gate_proj(x).split(self.inner, -1)
        return self.mlp_ln(x + self.mlp.down_proj(self.act(gate) * up))


class NewModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = nn.Module()
        self.embeddings.word_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.types = c["type_vocab_size"]
        if self.types > 0:
            self.embeddings.token_type_embeddings = nn.Embedding(self.types, c["hidden_size"])
        self.embeddings.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(NewLayer(c) for _ in range(c["num_hidden_layers"]))

    def forward(self, ids):
        x = self.embeddings.word_embeddings(ids)
        if self.types > 0:
            x = x + self.embeddings.token_type_embeddings(torch.zeros_like(ids))
        x = self.embeddings.LayerNorm(x)
        for layer in self.encoder.layer:
            x = layer(x)
        return x


class NewForSequenceClassification(nn.Module):
    """The cross-encoder: NewModel with its pooler (dense + tanh on the first token), then the classifier."""

    def __init__(self, c):
        super().__init__()
        self.new = NewModel(c)
        self.new.pooler = nn.Module()
        self.new.pooler.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.classifier = nn.Linear(c["hidden_size"], len(c["id2label"]))

    def forward(self, ids, types):
        x = self.new.embeddings.word_embeddings(ids) + self.new.embeddings.token_type_embeddings(types)
        x = self.new.embeddings.LayerNorm(x)
        for layer in self.new.encoder.layer:
            x = layer(x)
        return self.classifier(torch.tanh(self.new.pooler.dense(x[0])))


def randomise(model, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                # The one-dimensional weights are the LayerNorms' gammas, around 1; biases around 0.
                p.copy_(torch.randn_like(p) * 0.1 + (1.0 if name.endswith(".weight") else 0.0))
            else:
                p.copy_(torch.randn_like(p) * INIT)
    return model.eval()


def nomic_config(biases, activation):
    return {"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
            "auto_map": {"AutoConfig": "nomic-ai/nomic-bert-2048--configuration_hf_nomic_bert.NomicBertConfig",
                         "AutoModel": "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertModel"},
            "activation_function": activation, "n_embd": HIDDEN, "n_head": HEADS, "n_layer": LAYERS,
            "n_inner": INNER, "n_positions": POSITIONS, "layer_norm_epsilon": 1e-12, "vocab_size": 2000,
            "pad_vocab_size_multiple": 64, "type_vocab_size": 2, "rotary_emb_base": 500, "rotary_emb_fraction": 1.0,
            "rotary_emb_interleaved": False, "rotary_emb_scale_base": None, "rotary_scaling_factor": None,
            "max_trained_positions": 2048, "prenorm": False, "parallel_block": False,
            "parallel_block_tied_norm": False, "causal": False, "use_rms_norm": False, "qkv_proj_bias": biases,
            "mlp_fc1_bias": biases, "mlp_fc2_bias": biases, "use_flash_attn": True, "fused_bias_fc": True,
            "fused_dropout_add_ln": True, "attn_pdrop": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
            "torch_dtype": "float32"}


def gte_config(types, activation, rope_scaling=None):
    return {"architectures": ["NewModel"], "model_type": "new",
            "auto_map": {"AutoConfig": "Alibaba-NLP/new-impl--configuration.NewConfig",
                         "AutoModel": "Alibaba-NLP/new-impl--modeling.NewModel"},
            "vocab_size": 2000, "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
            "intermediate_size": INNER, "hidden_act": activation, "max_position_embeddings": POSITIONS,
            "type_vocab_size": types, "layer_norm_type": "layer_norm", "layer_norm_eps": 1e-12,
            "position_embedding_type": "rope", "rope_theta": 2000.0, "rope_scaling": rope_scaling, "pack_qkv": True,
            "unpad_inputs": False, "use_memory_efficient_attention": False, "logn_attention_scale": False,
            "logn_attention_clip1": False, "pad_token_id": 0, "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.0, "torch_dtype": "float32"}


def save(folder, model, config, pooling, normalize):
    """The model folder: config.json, model.safetensors, the tokenizer and the sentence-transformers files."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tensors = {name: p.detach().contiguous() for name, p in model.state_dict().items()}
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    shutil.copy(FAMILIES / "bert_mean_dense_norm" / "tokenizer.json", folder)
    source = FAMILIES / ("modernbert_mean_norm" if normalize else "modernbert_bias_cls")
    for name in ("tokenizer_config.json", "sentence_bert_config.json", "config_sentence_transformers.json",
                 "modules.json"):
        shutil.copy(source / name, folder)
    shutil.copytree(source / "1_Pooling", folder / "1_Pooling")
    pooling_file = folder / "1_Pooling" / "config.json"
    pooling_file.write_text(json.dumps(dict(json.loads(pooling_file.read_text()), pooling_mode=pooling), indent=4))
    if normalize:
        shutil.copytree(source / "2_Normalize", folder / "2_Normalize")


def save_bare(folder, model, config):
    """A bare transformers checkpoint (no sentence-transformers files), as a cross-encoder is published."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tensors = {name: p.detach().contiguous() for name, p in model.state_dict().items()}
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    shutil.copy(FAMILIES / "bert_mean_dense_norm" / "tokenizer.json", folder)
    shutil.copy(FAMILIES / "bert_reranker" / "tokenizer_config.json", folder)


@torch.no_grad()
def scores(model, queries, passages):
    """Per query, one [score] per passage: each pair alone, cut longest-first to the positions (the tokenizer's
    model_max_length, 512, is above them), with its token type ids."""
    tok = Tokenizer.from_file(str(FAMILIES / "bert_mean_dense_norm" / "tokenizer.json"))
    tok.enable_truncation(POSITIONS)
    out = []
    for q in queries:
        pairs = [tok.encode(q, p) for p in passages]
        out.append([model(torch.tensor(e.ids), torch.tensor(e.type_ids)).tolist() for e in pairs])
    return out


@torch.no_grad()
def embed(model, texts, pooling, normalize):
    tok = Tokenizer.from_file(str(FAMILIES / "bert_mean_dense_norm" / "tokenizer.json"))
    tok.enable_truncation(MAX_SEQ)
    rows = []
    for text in texts:
        states = model(torch.tensor(tok.encode(text).ids))
        row = states.mean(0) if pooling == "mean" else states[0]
        rows.append((nn.functional.normalize(row, dim=0) if normalize else row).tolist())
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--merge", type=pathlib.Path)
    args = parser.parse_args()
    torch.set_num_threads(2)
    committed = json.loads((FAMILIES / "references.json").read_text())
    texts = committed["texts"]
    if committed["max_seq_length"] != MAX_SEQ:
        raise SystemExit("references.json's max_seq_length is not this file's")
    models = [  # name, model, config, pooling, normalize, seed
        ("nomic_mean_norm", NomicBertModel, nomic_config(False, "swiglu"), "mean", True, 21),
        ("nomic_bias_geglu_cls", NomicBertModel, nomic_config(True, "geglu"), "cls", False, 22),
        ("gte_ntk_cls", NewModel, gte_config(0, "gelu", {"factor": 2.0, "type": "ntk"}), "cls", False, 23),
        ("gte_types_mean_norm", NewModel, gte_config(1, "silu"), "mean", True, 24),
    ]
    refs = {"models": {}}
    for name, cls, config, pooling, normalize, seed in models:
        model = randomise(cls(config), seed)
        save(args.out / name, model, config, pooling, normalize)
        refs["models"][name] = {"output": "dense", "embeddings": embed(model, texts, pooling, normalize)}
    reranker = gte_config(2, "gelu", {"factor": 2.0, "type": "ntk"})
    reranker.update(architectures=["NewForSequenceClassification"], id2label={"0": "LABEL_0"},
                    label2id={"LABEL_0": 0})
    model = randomise(NewForSequenceClassification(reranker), 25)
    save_bare(args.out / "gte_reranker", model, reranker)
    refs["models"]["gte_reranker"] = {
        "output": "scores", "scores": scores(model, committed["queries"], committed["passages"])}
    refs["versions_rotary_remote"] = {"torch": torch.__version__}
    (args.out / "references.json").write_text(json.dumps(refs, ensure_ascii=False))
    if args.merge:
        merged = json.loads((args.merge / "references.json").read_text())
        for name in refs["models"]:
            shutil.rmtree(args.merge / name, ignore_errors=True)
            shutil.copytree(args.out / name, args.merge / name)
        merged["models"].update(refs["models"])
        merged["versions_rotary_remote"] = refs["versions_rotary_remote"]
        (args.merge / "references.json").write_text(json.dumps(merged, ensure_ascii=False))


if __name__ == "__main__":
    main()
