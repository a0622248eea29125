// What `accel serve` is told: where to listen, how to batch, and the limits a request is held to.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "accel/core/dtype.hpp"
#include "serve/batcher.hpp"

namespace accel::serve {

// `accel serve --otlp-endpoint URL`: a span per request answered, with a child span per stage it went through,
// sent to an OpenTelemetry collector (otlp_exporter.hpp, request_tracing.hpp).
struct TracingOptions {
  std::string otlp_endpoint;                        // http://host[:port][/prefix]; empty: no tracing (and no cost)
  std::string service_name = "accel-serve";         // the resource's service.name
  std::size_t max_queue_spans = 8192;               // spans waiting for export; more are dropped (and counted)
  std::size_t max_batch_spans = 512;                // spans a POST
  std::chrono::milliseconds export_interval{1000};  // the longest a queued span waits for its batch
  std::chrono::milliseconds export_timeout{5000};   // to connect, and to send or read, per POST
};

struct ServeOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0: any free port (start() says which)
  BatcherOptions batching;
  std::size_t max_body_bytes = 8u << 20;
  std::size_t max_inputs = 2048;  // inputs per request
  // A connection holds one of these threads from its first request until it closes (cpp-httplib serves a
  // kept-alive connection on one thread), so this bounds the connections served at once.
  unsigned http_threads = 128;
  // An idle kept-alive connection is closed after this long; shutdown waits for it as well.
  int keep_alive_seconds = 5;
  // A client that sends nothing (or takes nothing) for this long loses its connection: a slow client cannot hold a
  // thread of the pool by dribbling a header or a body.
  int io_timeout_seconds = 10;
  // A request must arrive whole (its line, headers and body) within this many seconds of its first byte being
  // awaited, or it is answered 408 (or, still within its request line, not at all) and its connection closed: a
  // client dribbling bytes just inside io_timeout_seconds cannot hold a thread. There is no separate minimum rate
  // for bodies: at the default, the largest body (max_body_bytes, 8 MiB) needs about 280 KiB/s.
  int request_timeout_seconds = 30;
  // Inputs longer than the model's max_sequence_length are cut (at the end, unless the request says
  // truncation_direction) rather than answered 413, unless the request itself says `truncate: false` (TEI's
  // --auto-truncate).
  bool auto_truncate = false;
  // The prompt put before each text of a request that names no prompt_name (TEI's --default-prompt-name and
  // --default-prompt; at most one is set): the model's prompt of this name, or this text itself. Neither: the
  // folder's own default_prompt_name (config_sentence_transformers.json), if it has one. Text pairs (rerank,
  // predict) and token-id inputs never take a prompt.
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> default_prompt;
  // Non-empty: a JSON line per request answered (access_log.hpp) to this file, appended to, or "-" for standard
  // output.
  std::string access_log;
  TracingOptions tracing;
  // Non-empty: every route but /health asks for "Authorization: Bearer <api_key>" and answers 401 without it.
  std::string api_key;
};

// What one model of a server may have of its own (`accel serve --model A --model B` with per-model options): the
// name requests know it by, and batching and text options that otherwise are the server's. Unset: the server's.
struct ModelServeOptions {
  std::string name;  // empty: the folder's name (embed::ModelInfo::name)
  std::optional<std::uint32_t> batch_tokens;
  std::optional<std::size_t> max_batch_requests;
  std::optional<bool> auto_truncate;
  std::optional<DType> compute;  // embed::ModelOptions::compute (--dtype); unset: the device's default
  // At most one is set. A name that is empty takes the model back to its folder's own default_prompt_name, whatever
  // the server's; a prompt text that is empty puts nothing before the texts.
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> default_prompt;
};

// The options one model is served with: the server's, with `model`'s set ones in their place. A token budget the
// model does not set is at least its longest sequence (`max_sequence_length`), as embed::default_batch_tokens makes
// its runs: a 32K-context model's batches hold its whole inputs.
[[nodiscard]] inline ServeOptions with_model_options(ServeOptions server, const ModelServeOptions& model,
                                                     std::uint32_t max_sequence_length = 0) {
  server.batching.batch_tokens =
      model.batch_tokens.value_or(std::max(server.batching.batch_tokens, max_sequence_length));
  if (model.max_batch_requests) server.batching.max_requests = *model.max_batch_requests;
  if (model.auto_truncate) server.auto_truncate = *model.auto_truncate;
  if (model.default_prompt_name) {
    server.default_prompt = std::nullopt;
    server.default_prompt_name = model.default_prompt_name->empty() ? std::nullopt : model.default_prompt_name;
  }
  if (model.default_prompt) {
    server.default_prompt_name = std::nullopt;
    server.default_prompt = model.default_prompt;
  }
  return server;
}

}  // namespace accel::serve
