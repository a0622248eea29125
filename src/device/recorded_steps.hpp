// What every device does with a RunRecorded (include/accel/device/run_recorded.hpp) before its steps run, and how
// a step's failure is named.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <vector>

#include "accel/device/run_recorded.hpp"
#include "device/buffer_table.hpp"

namespace accel::device {

// `failed`, prefixed with the step's index and name.
[[nodiscard]] inline Status step_failure(std::size_t index, const RecordedStep& step, const Status& failed) {
  return Status(failed.code(), fmt::format("step {} ({}): {}", index, step_name(step), failed.message()),
                failed.source(), failed.raw_code());
}

// Resolves every buffer the steps name through `table`, writing nothing: the first that does not resolve refuses
// the request, named by its step and handle (stale_handle for a freed buffer or an older context). With `addresses`,
// the memory of each non-null buffer is appended to it, in step order.
[[nodiscard]] inline Status check_recorded_buffers(const BufferTable& table, const RunRecorded& run,
                                                   std::vector<const void*>* addresses = nullptr) {
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    Status failed;
    for_each_buffer(run.steps[i], [&](const BufferHandle& handle) {
      if (handle.is_null() || !failed.ok()) return;
      Result<BufferView> view = table.resolve(handle, "a recorded buffer");
      if (view.ok() && addresses != nullptr) addresses->push_back(view->data);
      if (!view.ok()) {
        failed = Status(view.status().code(),
                        fmt::format("launch refused: step {} ({}), {}: {}", i, step_name(run.steps[i]),
                                    to_string(handle), view.status().message()),
                        view.status().source(), view.status().raw_code());
      }
    });
    if (!failed.ok()) return failed;
  }
  return Status();
}

}  // namespace accel::device
