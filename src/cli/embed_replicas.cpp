#include "cli/embed_replicas.hpp"

#include <fmt/format.h>

#include <deque>

namespace accel::cli {

Result<EmbedReplicas> EmbedReplicas::load(System& system, const std::string& list, const embed::ModelOptions& options) {
  ACCEL_ASSIGN_OR_RETURN(DevicePool pool, DevicePool::open(system, list));
  std::vector<std::shared_ptr<embed::Model>> replicas;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    Result<std::shared_ptr<embed::Model>> model = embed::Model::load(pool.device(i), options);
    if (!model.ok()) return model.status().with_context(fmt::format("on device '{}'", pool.spec(i)));
    replicas.push_back(std::move(*model));
  }
  return EmbedReplicas(std::move(pool), std::move(replicas));
}

Status EmbedReplicas::run(const std::vector<std::string>& texts, std::size_t chunk_texts,
                          const embed::EmbedOptions& options,
                          const std::function<void(std::size_t, const embed::Embeddings&)>& take) {
  struct Chunk {
    std::size_t first = 0, count = 0;
    Placement placed;
    Future<embed::Embeddings> rows;
  };
  const auto start = [&](std::size_t first, std::size_t count) -> Result<Chunk> {
    ACCEL_ASSIGN_OR_RETURN(Placement placed, pool_.place(PlacementPolicy::least_loaded, count));
    std::vector<std::string> part(texts.begin() + static_cast<std::ptrdiff_t>(first),
                                  texts.begin() + static_cast<std::ptrdiff_t>(first + count));
    return Chunk{.first = first,
                 .count = count,
                 .placed = placed,
                 .rows = replicas_[placed.index]->embed(std::move(part), options)};
  };
  std::deque<Chunk> in_flight;
  std::size_t next = 0;
  while (next < texts.size() || !in_flight.empty()) {
    while (next < texts.size() && in_flight.size() < replicas_.size()) {
      const std::size_t count = std::min(chunk_texts, texts.size() - next);
      Result<Chunk> started = start(next, count);
      if (!started.ok()) return started.status().with_context(fmt::format("texts {}..{}", next + 1, next + count));
      in_flight.push_back(std::move(*started));
      next += count;
    }
    Chunk chunk = std::move(in_flight.front());
    in_flight.pop_front();
    Result<embed::Embeddings> rows = chunk.rows.wait();
    pool_.finish(chunk.placed, rows.status());
    // A device that lost its context is down now (finish): the chunk runs again on another, while one is up.
    while (!rows.ok() && !pool_.state(chunk.placed.index).usable) {
      Result<Chunk> again = start(chunk.first, chunk.count);
      if (!again.ok()) break;
      chunk = std::move(*again);
      rows = chunk.rows.wait();
      pool_.finish(chunk.placed, rows.status());
    }
    if (!rows.ok())
      return rows.status().with_context(fmt::format("texts {}..{}", chunk.first + 1, chunk.first + chunk.count));
    take(chunk.first, *rows);
  }
  return Status();
}

}  // namespace accel::cli
