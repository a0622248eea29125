// accel::serve::AccessLog — `accel serve --access-log FILE|-`: one JSON object a line per request answered, for log
// pipelines that read JSON lines:
//
//   {"time": "2026-11-29T06:30:01.123Z", "method": "POST", "route": "/embed", "model": "all-MiniLM-L6-v2",
//    "status": 200, "inputs": 2, "tokens": 14, "ms": {"total": 3.1, "queue": 0.4, "tokenize": 0.1,
//    "compute": 2.2, "serialize": 0.05}, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
//
// `route` is the route's path, or "other" for a path no route owns (so that a scanner's paths are not written out);
// `model` is empty, `inputs` and `tokens` 0, for a request that reached no model (a refusal before its route ran,
// /health, /metrics). `tokens` are those run, prompts and special tokens included. Stage times are this request's:
// its wait in the queue and its batch's run (shared with the batch's other requests), its tokenisation and the
// writing of its answer. Lines are written whole under a lock and flushed, so that concurrent requests never
// interleave within a line. `trace_id` is the request's trace (with --otlp-endpoint, that of its spans; without,
// that of a valid traceparent header it came with), "" when it has none.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "accel/core/result.hpp"
#include "serve/request_trace.hpp"

namespace accel::serve {

class AccessLog {
 public:
  // "-": standard output; otherwise the file, appended to (created if need be). unavailable naming the path when it
  // cannot be opened.
  static Result<std::unique_ptr<AccessLog>> open(const std::string& destination);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  void write(std::string_view method, std::string_view route, int status, const RequestTrace& trace);

 private:
  AccessLog(std::FILE* file, bool owned) : file_(file), owned_(owned) {}
  std::mutex mutex_;
  std::FILE* file_;
  bool owned_;
};

}  // namespace accel::serve
