#include "cli/cache_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include "accel/embed/model.hpp"
#include "cache/disk_store.hpp"
#include "cli/device_choice.hpp"
#include "cli/json_output.hpp"
#include "cli/progress.hpp"
#include "cli/text_input.hpp"

namespace accel::cli {
namespace {

namespace fs = std::filesystem;

struct KnownCache {
  std::string name;
  fs::path directory;
  std::optional<CacheStats> stats;  // this process's counters, where the CPU device reports the cache
};

// The persistent caches the CPU device reports, then every other directory under the cache root, by name.
std::vector<KnownCache> known_caches() {
  std::vector<KnownCache> caches;
  System system;
  if (Result<Device> cpu = Device::open(system, {.kind = DeviceKind::cpu}); cpu.ok()) {
    if (Result<DeviceInfo> info = cpu->info().wait(); info.ok()) {
      for (const CacheStats& stats : info->caches) {
        if (!stats.directory.empty())
          caches.push_back({stats.name, fs::path(stats.directory).lexically_normal(), stats});
      }
    }
  }
  const fs::path root = cache::DiskStore::default_directory("any").parent_path();
  std::error_code error;
  std::vector<KnownCache> others;
  for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    const fs::path directory = it->path().lexically_normal();
    if (!it->is_directory(error) ||
        std::ranges::any_of(caches, [&](const KnownCache& c) { return c.directory == directory; }))
      continue;
    others.push_back({directory.filename().string(), directory, std::nullopt});
  }
  std::ranges::sort(others, {}, &KnownCache::name);
  caches.insert(caches.end(), others.begin(), others.end());
  return caches;
}

}  // namespace

int run_cache_list(const CacheCommand& command) {
  nlohmann::json listed = nlohmann::json::array();
  int code = kDone;
  for (const KnownCache& known : known_caches()) {
    const Result<std::vector<cache::ScannedEntry>> entries = cache::DiskStore::scan({.directory = known.directory});
    std::uint64_t bytes = 0, bad = 0;
    if (entries.ok()) {
      for (const cache::ScannedEntry& entry : *entries) {
        bytes += entry.bytes;
        bad += entry.problem.empty() ? 0 : 1;
      }
    } else {
      code = kBadCache;
    }
    nlohmann::json item = {{"name", known.name}, {"directory", known.directory.string()}};
    if (entries.ok()) {
      item["entries"] = entries->size();
      item["bytes"] = bytes;
      item["bad_entries"] = bad;
    } else {
      item["error"] = entries.status().to_string();
    }
    if (known.stats) item["this_process"] = cache_json(*known.stats);
    if (!command.json) {
      const std::string hits = known.stats ? fmt::format(", {} hits since start", known.stats->hits) : "";
      if (entries.ok()) {
        fmt::print("{}: {}: {} entries, {} bytes{}{}\n", known.name, known.directory.string(), entries->size(), bytes,
                   bad != 0 ? fmt::format(", {} bad (accel cache verify)", bad) : "", hits);
      } else {
        fmt::print("{}: {}: {}\n", known.name, known.directory.string(), entries.status().to_string());
      }
    }
    listed.push_back(std::move(item));
  }
  if (command.json) print_json({{"caches", std::move(listed)}});
  return code;
}

int run_cache_verify(const CacheCommand&) {
  std::uint64_t checked = 0, bad = 0;
  int code = kDone;
  for (const KnownCache& known : known_caches()) {
    const Result<std::vector<cache::ScannedEntry>> entries = cache::DiskStore::scan({.directory = known.directory});
    if (!entries.ok()) {
      fmt::print("{}: {}\n", known.name, entries.status().to_string());
      code = kBadCache;
      continue;
    }
    for (const cache::ScannedEntry& entry : *entries) {
      ++checked;
      if (entry.problem.empty()) continue;
      ++bad;
      fmt::print("{}: {}: {}\n", known.name, entry.path.string(), entry.problem);
    }
  }
  fmt::print("{} entries checked, {} bad\n", checked, bad);
  return bad != 0 ? kBadCache : code;
}

int run_cache_clear(const CacheCommand& command) {
  bool found = false;
  int code = kDone;
  for (const KnownCache& known : known_caches()) {
    if (!command.name.empty() && command.name != known.name && command.name != known.directory.filename().string())
      continue;
    found = true;
    const Result<std::uint64_t> removed = cache::DiskStore::clear({.directory = known.directory});
    if (removed.ok()) {
      fmt::print("{}: removed {} entries from {}\n", known.name, *removed, known.directory.string());
    } else {
      fmt::print(stderr, "accel cache clear: {}: {}\n", known.name, removed.status().to_string());
      code = kBadCache;
    }
  }
  if (!found && !command.name.empty()) {
    fmt::print(stderr, "accel cache clear: no cache named {} (accel cache list names them)\n", command.name);
    return kFailed;
  }
  return code;
}

int run_cache_warm(const CacheCommand& command) {
  const fs::path folder = command.model.model.empty() ? embed::default_model_folder() : fs::path(command.model.model);
  System system;
  auto [model, device_failed] =
      open_model(system, "cpu", {.folder = folder, .batch_tokens = command.model.batch_tokens});
  if (!model.ok()) {
    fmt::print(stderr, "accel cache warm: {}\n", model.status().to_string());
    return device_failed ? kFailed : kBadModel;
  }
  const embed::ModelInfo& info = (*model)->info();
  const std::vector<embed::BatchBucket> buckets = (*model)->buckets();
  {  // the bar ends its line before the summary
    Progress progress(buckets.size(), "buckets");
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      const auto [tokens, sequences] = buckets[i];
      // id 0, which every vocabulary has: only the shape matters
      if (Result<embed::Embeddings> ran = (*model)->embed_tokens(embed::batch_filling(buckets[i], 0)).wait();
          !ran.ok()) {
        fmt::print(stderr, "accel cache warm: {} tokens in {} sequences: {}\n", tokens, sequences,
                   ran.status().to_string());
        return kFailed;
      }
      progress.update(i + 1);
    }
  }
  std::uint64_t builds = 0, loads = 0;
  std::string directory;
  for (const CacheStats& stats : (*model)->stats().caches) {
    builds += stats.builds;
    loads += stats.disk_loads;
    directory = stats.directory;
  }
  fmt::print("warmed {} buckets of {} ({} batch tokens): {} compiled, {} loaded from the cache in {}\n", buckets.size(),
             info.name, info.batch_tokens, builds, loads, directory.empty() ? "(none)" : directory);
  return kDone;
}

}  // namespace accel::cli
