#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <utility>

namespace accel::cli {

Progress::Progress(std::size_t total, std::string unit)
    : total_(total), unit_(std::move(unit)), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\n");
}

void Progress::update(std::size_t done) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (seconds < 1.0 || !isatty(STDERR_FILENO)) return;
  const std::size_t width = 30, filled = total_ == 0 ? width : done * width / total_;
  fmt::print(stderr, "\r[{}{}] {}/{} {}, {:.0f} {}/s", std::string(filled, '#'), std::string(width - filled, ' '), done,
             total_, unit_, static_cast<double>(done) / seconds, unit_);
  shown_ = true;
}

}  // namespace accel::cli
