// accel::serve::ServedModels — the models one server serves (`accel serve --model A --model B`), each with its own
// batcher and token budget (an InferenceService) on the device they share, its own request limits and its own
// metrics; and which of them a request is for: the one its "model" field names (OpenAI's and Cohere's routes send
// it; TEI's take it too), else the first. With a single model any name is answered by it, as OpenAI clients send
// names of their own ("text-embedding-3-small"); with several, a name that is none of them is 400 naming it and
// the names served.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/device/device.hpp"
#include "accel/device/pool.hpp"
#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"
#include "serve/inference_service.hpp"
#include "serve/metrics.hpp"
#include "serve/model_stats_cache.hpp"
#include "serve/serve_options.hpp"

namespace accel::serve {

// A loaded and warmed model to serve: the device it runs on (whose health /health reports), how to load it again
// after the device lost its context (InferenceService; empty: no retry), and its own name and options, if any.
// Served on several devices (`--devices`): `replicas` holds a replica per device of `pool` (replica i on device i),
// `model`, `device` and `reload` being the first replica's.
struct ServedModel {
  std::shared_ptr<embed::Model> model;
  Device device;
  InferenceService::Reload reload;
  ModelServeOptions options;
  std::optional<DevicePool> pool;
  std::vector<ReplicaModel> replicas;
};

// One model of the server, by its name (its served name, else the folder's: ModelInfo::name).
struct ModelSlot {
  ModelSlot(ServedModel served, const ServeOptions& server);

  std::string name;
  ServeOptions options;  // the server's, with the model's own in their place (with_model_options)
  Device device;
  RequestLimits limits;
  Metrics metrics;  // before the service, which records into it
  InferenceService service;
  ModelStatsCache stats;  // after the service it reads
};

class ServedModels {
 public:
  // invalid_argument for no models, or two of one name (a request could not reach the second), each model named by
  // its served name, else its folder's.
  static Result<std::unique_ptr<ServedModels>> make(std::vector<ServedModel> models, const ServeOptions& options);

  // The slot for a request naming `name` (empty: none named) — see the top of the file.
  [[nodiscard]] ApiResult<ModelSlot*> select(std::string_view name) const;
  // Why the server cannot serve now (a device that cannot, a model being reloaded), naming the model when there
  // are several; empty when every model serves.
  [[nodiscard]] std::string unready_reason() const;
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  [[nodiscard]] const std::vector<std::unique_ptr<ModelSlot>>& slots() const noexcept { return slots_; }
  // Answers everything queued on every model, then refuses.
  void stop();

 private:
  std::vector<std::unique_ptr<ModelSlot>> slots_;  // the first is the default
  std::vector<std::string> names_;
};

// The "model" a POST body names: empty when it names none (or is not a JSON object: the route's parser says why);
// 400 naming 'model' when it is not a string.
[[nodiscard]] ApiResult<std::string> requested_model(std::string_view body);

}  // namespace accel::serve
