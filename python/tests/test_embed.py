"""accel.embed.Model: SentenceTransformer.encode's shape, and the same numbers as `accel embed` (the C++ CLI)."""

import subprocess

import numpy as np
import pytest

import accel

TEXTS = ["a cat sat on the mat", "stock markets fell sharply on Tuesday", "the quick brown fox",
         "Ünïcödé text, emoji 🙂 and punctuation!?", "x", "a much longer sentence " * 40]


@pytest.fixture(scope="module")
def model(model_folder):
    device = accel.Device.open("cpu")
    yield accel.embed.Model(model_folder, device=device)
    device.close()


def test_encode_shapes_like_sentence_transformers(model):
    rows = model.encode(TEXTS)
    assert rows.shape == (len(TEXTS), 384) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-5)  # the folder's Normalize module
    one = model.encode(TEXTS[0])
    assert one.shape == (384,)
    # A text run alone takes other kernels than in a packed batch (a one-row product): equal to ~1e-7, not in bits.
    np.testing.assert_allclose(one, rows[0], atol=1e-6)
    assert model.get_sentence_embedding_dimension() == 384
    assert model.encode([]).shape == (0, 384)


def test_batch_size_and_options(model):
    whole = model.encode(TEXTS, batch_size=64)
    np.testing.assert_allclose(model.encode(TEXTS, batch_size=2), whole, atol=1e-6)
    rows = model.encode(TEXTS, convert_to="list")
    assert isinstance(rows, list) and len(rows) == len(TEXTS)
    cut = model.encode(TEXTS, truncate_dim=64, normalize_embeddings=True)
    assert cut.shape == (len(TEXTS), 64)
    np.testing.assert_allclose(np.linalg.norm(cut, axis=1), 1.0, rtol=1e-5)
    with pytest.raises(ValueError):
        model.encode(TEXTS, convert_to="pandas")


def test_a_bad_folder_raises_an_accel_error(tmp_path):
    with pytest.raises(accel.Error, match=str(tmp_path.name)):
        accel.embed.Model(tmp_path, device=accel.Device.open("cpu"))


def test_equal_to_the_cli_bit_for_bit(model, tmp_path, accel_cli, model_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    out = tmp_path / "vectors.npy"
    subprocess.run([str(accel_cli), "embed", "--device", "cpu", "--model", model_folder, str(texts), "-o", str(out)],
                   check=True, capture_output=True)
    expected = np.load(out)
    rows = model.encode(TEXTS, batch_size=512)  # the CLI's chunk of texts per call
    assert rows.shape == expected.shape
    assert np.abs(rows - expected).max() == 0.0, f"max difference {np.abs(rows - expected).max()}"


def test_a_device_by_name_as_sentence_transformers_takes_one(model, model_folder):
    named = accel.embed.Model(model_folder, device="cpu-isolated")
    try:
        assert named.device.kind == "cpu" and named.device.isolation == "worker_process"
        np.testing.assert_array_equal(named.encode(TEXTS[:3]), model.encode(TEXTS[:3]))
    finally:
        named.device.close()
    with pytest.raises(accel.InvalidArgument, match="unknown device 'tpu'"):
        accel.embed.Model(model_folder, device="tpu")
