// `accel embed --devices LIST`: a replica of the model on each device of a DevicePool, and the input's chunks run on
// them at once (each on the device with the fewest texts in flight), taken back in input order. A chunk whose device
// lost its context runs again on another device, which then serves without it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accel/device/pool.hpp"
#include "accel/embed/model.hpp"

namespace accel::cli {

class EmbedReplicas {
 public:
  // The replicas, one per device of `list` (parse_device_list); the first error, naming its device.
  static Result<EmbedReplicas> load(System& system, const std::string& list, const embed::ModelOptions& options);

  [[nodiscard]] embed::Model& first() const { return *replicas_.front(); }

  // Embeds `texts` in chunks of `chunk_texts`, up to one chunk per device at once, and hands each chunk's rows to
  // `take` (its first text's index, its embeddings) in input order; the first chunk that fails on every device it
  // tried stops the run with its error, naming its texts.
  Status run(const std::vector<std::string>& texts, std::size_t chunk_texts, const embed::EmbedOptions& options,
             const std::function<void(std::size_t, const embed::Embeddings&)>& take);

 private:
  EmbedReplicas(DevicePool pool, std::vector<std::shared_ptr<embed::Model>> replicas)
      : pool_(std::move(pool)), replicas_(std::move(replicas)) {}

  DevicePool pool_;
  std::vector<std::shared_ptr<embed::Model>> replicas_;  // replicas_[i] on pool_.device(i)
};

}  // namespace accel::cli
