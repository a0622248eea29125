// accel::cli::Progress — the progress bar of long CLI work (embedding a file, warming a cache): drawn on stderr when
// it is a terminal and the work has taken a second, never on a pipe, so scripts read only the output.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace accel::cli {

class Progress {
 public:
  // `unit`: what is counted, plural ("texts", "buckets").
  Progress(std::size_t total, std::string unit);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();
  void update(std::size_t done);

 private:
  std::size_t total_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false;
};

}  // namespace accel::cli
