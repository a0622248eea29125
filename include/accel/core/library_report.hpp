/// @file
/// accel::LibraryReport — what the library families tell a device about themselves when it is queried: the
/// libraries they answer with and the statistics of their caches. Several requests of one family report the same
/// library and caches, so an entry replaces one of the same name.
#pragma once

#include <utility>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/core/library_version.hpp"

namespace accel {

/// The libraries and cache statistics a device's families report when it is queried.
struct LibraryReport {
  std::vector<LibraryVersion> libraries;  ///< the libraries answering requests, one per name
  std::vector<CacheStats> caches;         ///< the families' caches, one per name

  /// Adds `library`, replacing the entry of the same name.
  void report(LibraryVersion library) { replace_or_append(libraries, std::move(library)); }
  /// Adds `stats`, replacing the entry of the same name.
  void report(CacheStats stats) { replace_or_append(caches, std::move(stats)); }

 private:
  template <class Item>
  static void replace_or_append(std::vector<Item>& list, Item item) {
    for (Item& known : list) {
      if (known.name == item.name) {
        known = std::move(item);
        return;
      }
    }
    list.push_back(std::move(item));
  }
};

}  // namespace accel
