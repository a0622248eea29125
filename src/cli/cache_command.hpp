// `accel cache list [--json]`: each persistent cache (the directories the CPU device reports, and every other
// directory under the cache root, $ACCEL_CACHE_DIR or $XDG_CACHE_HOME/accel or ~/.cache/accel), with its entries and
// bytes on disk and this process's counters where the device reports the cache.
// `accel cache verify`: every entry checked as the loaders check it (cache::DiskStore::scan); each bad one printed
// with its reason; exit 6 when any is bad or a directory is refused.
// `accel cache clear [NAME]`: the entries of one cache (by its name or directory name) or of all removed; a
// directory this process may not trust (another user's, writable by others) is refused by name, exit 6.
// `accel cache warm [--model DIR] [--batch-tokens N]`: every bucket of the model's compiled graph (tokens and
// sequences ladders) run once, so each executable is compiled and stored in the persistent "graph-executables"
// cache; a fresh process with the same model and batch tokens then loads them instead of compiling.
#pragma once

#include <string>

#include "cli/embed_command.hpp"

namespace accel::cli {

struct CacheCommand {
  bool json = false;
  std::string name;    // clear's: empty for every cache
  EmbedOptions model;  // warm's
};

// Exit codes: cli/text_input.hpp's ExitCode (kBadCache for a failed verify or a refused directory).
int run_cache_list(const CacheCommand& command);
int run_cache_verify(const CacheCommand& command);
int run_cache_clear(const CacheCommand& command);
int run_cache_warm(const CacheCommand& command);

}  // namespace accel::cli
