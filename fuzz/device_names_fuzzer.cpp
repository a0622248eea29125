// The device names every command's --device and --devices take, and Python's Device.open (accel/device/pool.hpp):
// any bytes, as a command line hands them over; the first byte is how many GPUs the host has, modulo 8 (the seeds'
// digits '0'-'7' are 0-7). A list or a name it accepts opens only what the host has (a GPU's ordinal below the
// count), a name is the one-entry list of itself (but "auto", which is no entry), and every refusal is
// invalid_argument with a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "accel/device/pool.hpp"

namespace {

void check_opens_only_what_the_host_has(const accel::DeviceOptions& options, int gpus) {
  if (options.kind == accel::DeviceKind::cuda && (options.ordinal < 0 || options.ordinal >= gpus)) std::abort();
  if (options.kind == accel::DeviceKind::cpu && options.ordinal != 0) std::abort();
  if (options.memory_limit_bytes != 4096) std::abort();  // the caller's base options kept
}

void check_refusal(const accel::Status& status) {
  if (status.code() != accel::Code::invalid_argument || status.message().empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int gpus = data[0] % 8;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const accel::DeviceOptions base{.memory_limit_bytes = 4096};

  const accel::Result<std::vector<accel::DeviceSpec>> list = accel::parse_device_list(text, gpus, base);
  if (list.ok()) {
    if (list->empty()) std::abort();
    for (const accel::DeviceSpec& spec : *list) {
      if (spec.text.empty()) std::abort();
      check_opens_only_what_the_host_has(spec.options, gpus);
    }
  } else {
    check_refusal(list.status());
  }

  const accel::Result<accel::DeviceOptions> choice = accel::parse_device_choice(text, gpus, base);
  if (!choice.ok()) {
    check_refusal(choice.status());
    return 0;
  }
  check_opens_only_what_the_host_has(*choice, gpus);
  if (text.find(',') != std::string_view::npos) std::abort();
  if (text == "auto") {
    if (choice->kind != (gpus > 0 ? accel::DeviceKind::cuda : accel::DeviceKind::cpu)) std::abort();
    return 0;
  }
  if (!list.ok() || list->size() != 1) std::abort();
  const accel::DeviceOptions& entry = list->front().options;
  if (entry.kind != choice->kind || entry.ordinal != choice->ordinal || entry.isolation != choice->isolation)
    std::abort();
  return 0;
}
