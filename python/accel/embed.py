"""Text embeddings: accel.embed.Model, a sentence-transformers folder run by accel (all-MiniLM-L6-v2 and the other
BERT-family encoders accel's C++ side loads), with SentenceTransformer.encode's signature so that replacing one with
the other is a one-line change.

    model = accel.embed.Model("path/to/all-MiniLM-L6-v2")   # device: the default device unless given
    vectors = model.encode(["a cat sat on the mat", "stock markets fell"])   # float32, (2, 384)
"""

import numpy as _np

from . import _accel


class Model:
    """An embedding model on a device. `folder`: a sentence-transformers folder or a transformers checkpoint;
    `device`: an accel.Device, or a device's name as SentenceTransformer's `device` takes one ("cpu", "cuda", "cuda:1";
    and accel's "cpu-isolated", "cuda-isolated:0", "auto": accel.Device.open) (default: accel.Device.default());
    `batch_tokens`: the most tokens one packed run holds
    (default: 16,384 on the CPU, up to 65,536 on a GPU by the model's width, and at least the model's longest
    sequence: accel::embed::default_batch_tokens)."""

    def __init__(self, folder=None, device=None, batch_tokens=None):
        if device is None:
            device = _accel.Device.default()
        elif isinstance(device, str):
            device = _accel.Device.open(device)
        folder = _accel.default_model_folder() if folder is None else str(folder)
        self._model = _accel._EmbedModel.load(device, folder, 0 if batch_tokens is None else batch_tokens)

    @property
    def device(self):
        return self._model.device

    @property
    def info(self):
        """What loaded: family, head, dimensions, max_sequence_length, prompts, ..."""
        return self._model.info

    def get_sentence_embedding_dimension(self):
        return self._model.info["dimensions"]

    def encode_async(self, sentences, prompt_name=None, prompt=None, truncation="right", dimensions=0):
        """One accel.Future of (rows, tokens per input) for a list of texts."""
        return self._model.embed(list(sentences), prompt, prompt_name, truncation, dimensions)

    def encode(self, sentences, prompt_name=None, prompt=None, batch_size=32, show_progress_bar=False,
               output_value="sentence_embedding", precision="float32", convert_to_numpy=True,
               convert_to_tensor=False, device=None, normalize_embeddings=False, truncate_dim=None,
               convert_to=None, truncation="right"):
        """SentenceTransformer.encode: one row per sentence (a single string gives one vector). Every batch of
        `batch_size` sentences is sent before the first is waited for. `normalize_embeddings` scales rows to unit
        length (the model's own Normalize module, if it has one, already did); `truncate_dim` keeps the first N
        dimensions and normalises again where the model normalises. `convert_to`: "numpy" (default), "list" (a list
        of 1-D arrays) or "torch" (where PyTorch is installed). `show_progress_bar` and `device` are accepted for
        compatibility and ignored; `output_value` and `precision` support their defaults only."""
        if output_value != "sentence_embedding":
            raise ValueError("encode: only output_value='sentence_embedding' is supported")
        if precision != "float32":
            raise ValueError("encode: only precision='float32' is supported")
        if batch_size < 1:
            raise ValueError(f"encode: batch_size must be at least 1, not {batch_size}")
        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        futures = [self.encode_async(texts[first:first + batch_size], prompt_name, prompt, truncation,
                                     truncate_dim or 0)
                   for first in range(0, len(texts), batch_size)]
        width = self._model.info["dimensions"] if not truncate_dim else truncate_dim
        chunks = [future.result()[0] for future in futures]
        rows = _np.concatenate(chunks) if chunks else _np.empty((0, width), _np.float32)
        if normalize_embeddings:
            norms = _np.linalg.norm(rows, axis=1, keepdims=True)
            rows = rows / _np.maximum(norms, _np.float32(1e-12))
        kind = convert_to or ("torch" if convert_to_tensor else "numpy" if convert_to_numpy else "list")
        if kind == "numpy":
            result = rows
        elif kind == "list":
            result = list(rows)
        elif kind == "torch":
            import torch  # only when asked for
            result = torch.from_numpy(rows)
        else:
            raise ValueError(f"encode: convert_to '{kind}' is not one of 'numpy', 'list', 'torch'")
        return result[0] if single else result
