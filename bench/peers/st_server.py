"""The PyTorch peer of `accel serve`: the embedding server a user would write with sentence-transformers.

OpenAI's POST /v1/embeddings (input: a string or an array of strings; float embeddings; usage) and GET /health,
served by the standard library's ThreadingHTTPServer (HTTP/1.1, kept-alive connections, a thread per connection)
with dynamic batching: request threads queue their texts; one batching thread takes what is queued, waiting up to
--max-wait-ms for more (up to --max-batch texts), runs the model once per batch and hands each request its rows.
The model runs in float16 on CUDA (as accel serve's does) unless told otherwise.

    python3 bench/peers/st_server.py --model .deps/models/all-MiniLM-L6-v2 --port 8081
    build/release/bench/serve_load --port 8081 --connections 64 --workload short
"""
import argparse
import json
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
from sentence_transformers import SentenceTransformer


class Pending:
    """One request's texts, and its answer once the batching thread has run them."""

    def __init__(self, texts):
        self.texts = texts
        self.done = threading.Event()
        self.embeddings = None
        self.tokens = 0
        self.error = None


class Batcher(threading.Thread):
    def __init__(self, model, max_batch, max_wait_s):
        super().__init__(daemon=True)
        self.model = model
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.queue = queue.Queue()

    def run(self):
        while True:
            batch = [self.queue.get()]
            count = len(batch[0].texts)
            deadline = time.perf_counter() + self.max_wait_s
            while count < self.max_batch:
                timeout = deadline - time.perf_counter()
                if timeout <= 0:
                    break
                try:
                    batch.append(self.queue.get(timeout=timeout))
                except queue.Empty:
                    break
                count += len(batch[-1].texts)
            self.embed(batch)

    @torch.inference_mode()
    def embed(self, batch):
        texts = [text for pending in batch for text in pending.texts]
        try:
            # The public API a user would call; the tokenizer again for usage's token count (the fast Rust one).
            embeddings = self.model.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                                           convert_to_numpy=True)
            tokens = [len(ids) for ids in self.model.tokenizer(
                texts, truncation=True, max_length=self.model.max_seq_length)["input_ids"]]
        except Exception as error:  # one bad batch answers its requests with the error, and the server goes on
            print(f"st_server: batch of {len(texts)} failed: {error!r}", file=sys.stderr, flush=True)
            for pending in batch:
                pending.error = str(error)
                pending.done.set()
            return
        row = 0
        for pending in batch:
            count = len(pending.texts)
            pending.embeddings = embeddings[row:row + count]
            pending.tokens = int(sum(tokens[row:row + count]))
            row += count
            pending.done.set()


def make_handler(batcher, model_name):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept-alive connections
        # Headers and body go out in two writes; with Nagle's algorithm the second waits for the delayed ACK of
        # the first (40 ms on Linux).
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def reply(self, status, payload):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message):
            self.reply(status, {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                          "code": None}})

        def do_GET(self):
            if self.path == "/health":
                self.reply(200, {"status": "ok"})
            else:
                self.error(404, f"no route for GET {self.path}")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path != "/v1/embeddings":
                return self.error(404, f"no route for POST {self.path}")
            try:
                request = json.loads(body)
            except ValueError:
                return self.error(400, "the request body is not valid JSON")
            texts = request.get("input") if isinstance(request, dict) else None
            if isinstance(texts, str):
                texts = [texts]
            if not isinstance(texts, list) or not texts or not all(isinstance(text, str) for text in texts):
                return self.error(400, "'input' must be a string or a non-empty array of strings")
            pending = Pending(texts)
            batcher.queue.put(pending)
            pending.done.wait()
            if pending.error is not None:
                return self.reply(500, {"error": {"message": pending.error, "type": "server_error", "param": None,
                                                  "code": None}})
            data = [{"object": "embedding", "index": i, "embedding": row.tolist()}
                    for i, row in enumerate(pending.embeddings)]
            self.reply(200, {"object": "list", "data": data, "model": request.get("model", model_name),
                             "usage": {"prompt_tokens": pending.tokens, "total_tokens": pending.tokens}})

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=".deps/models/all-MiniLM-L6-v2")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=("float16", "float32"), default=None,
                        help="default: float16 on CUDA, float32 on the CPU")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--max-batch", type=int, default=256, help="texts per batch at most")
    parser.add_argument("--max-wait-ms", type=float, default=2.0, help="longest wait for a batch to fill")
    args = parser.parse_args()

    model = SentenceTransformer(args.model, device=args.device)
    dtype = args.dtype or ("float16" if args.device.startswith("cuda") else "float32")
    if dtype == "float16":
        model.half()
    model.eval()
    model.encode(["warm up the model before the first request"])

    batcher = Batcher(model, args.max_batch, args.max_wait_ms / 1000.0)
    batcher.start()
    server = ThreadingHTTPServer((args.host, args.port), make_handler(batcher, args.model.rstrip("/").split("/")[-1]))
    server.daemon_threads = True
    print(f"st_server: {args.model} on {args.device} ({dtype}), listening on http://{args.host}:{args.port}",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
