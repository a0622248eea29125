#!/usr/bin/env python3
"""wrk's Lua script for OpenAI's /v1/embeddings, one real text of the corpus per request, in turn.

  wrk_bodies.py CORPUS.jsonl OUT.lua queries|passages

queries: texts of 3 to 12 words; passages: texts of 32 to 240 tokens as all-MiniLM-L6-v2's tokenizer counts them, so
that every one fits a 256-token model whole (many scripts, from the tokenizer's golden corpus, which holds each text's
ids). wrk's done() prints one JSON line: requests, seconds, non_2xx (answers other than 2xx), errors (connect,
read, write and timeouts: requests nobody answered) and latency percentiles in microseconds.
"""
import json
import sys

corpus, out, kind = sys.argv[1], sys.argv[2], sys.argv[3]
if kind not in ("queries", "passages"):
    sys.exit(f"texts must be queries or passages, not {kind!r}")
texts = []
for line in open(corpus, encoding="utf-8"):
    entry = json.loads(line)
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str) or "]==]" in entry["text"]:
        continue
    text, tokens = entry["text"], len(entry.get("ids", []))
    if (kind == "queries" and 3 <= len(text.split()) <= 12) or (kind == "passages" and 32 <= tokens <= 240):
        texts.append(text)
if len(texts) < 50:
    sys.exit(f"only {len(texts)} {kind} in the corpus")
with open(out, "w", encoding="utf-8") as lua:
    lua.write("bodies = {\n")
    for text in texts:
        lua.write("[==[" + json.dumps({"input": text}, ensure_ascii=False) + "]==],\n")
    lua.write("}\n")
    lua.write("""
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/embeddings", {["Content-Type"] = "application/json"}, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests": %d, "seconds": %.3f, "non_2xx": %d, "errors": %d, "p50_us": %d, ' ..
    '"p90_us": %d, "p99_us": %d, "p999_us": %d, "max_us": %d}\\n', summary.requests, summary.duration / 1e6,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max))
end
""")
print(f"{len(texts)} {kind}", file=sys.stderr)
