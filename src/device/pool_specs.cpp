// Device names ("cuda-isolated:1"), device lists ("cpu,cuda-isolated:1,all") and placement policy names: the text
// side of accel::Device and accel::DevicePool.
#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "accel/device/pool.hpp"

namespace accel {
namespace {

constexpr std::string_view kEntries = "cpu, cpu-isolated, cuda[:N], cuda-isolated[:N], N or all";

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// The ordinal of "N" (all digits), or nothing.
std::optional<int> ordinal_of(std::string_view digits) {
  int value = 0;
  // from_chars takes a sign, which a GPU's ordinal never has ("-1" is no device).
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

DeviceSpec make_spec(std::string text, const DeviceOptions& base, DeviceKind kind, int ordinal, Isolation isolation) {
  DeviceOptions options = base;
  options.kind = kind;
  options.ordinal = ordinal;
  options.isolation = isolation;
  return DeviceSpec{.text = std::move(text), .options = std::move(options)};
}

// One device's name (any entry of a list but "all"); errors name it, `names` says what the caller accepts.
Result<DeviceSpec> parse_one(std::string_view entry, int cuda_devices, const DeviceOptions& base,
                             std::string_view names) {
  const auto bad = [&](std::string_view why) {
    return invalid_argument(fmt::format("{} '{}' ({})", why, entry, names));
  };
  if (entry.empty()) return bad("empty entry");
  if (entry == "cpu" || entry == "cpu:0")
    return make_spec(std::string(entry), base, DeviceKind::cpu, 0, Isolation::in_process);
  if (entry == "cpu-isolated" || entry == "cpu-isolated:0")
    return make_spec(std::string(entry), base, DeviceKind::cpu, 0, Isolation::worker_process);
  Isolation isolation = Isolation::in_process;
  std::string_view ordinal_text = entry;
  if (entry.starts_with("cuda-isolated")) {
    isolation = Isolation::worker_process;
    ordinal_text = entry.substr(std::string_view("cuda-isolated").size());
  } else if (entry.starts_with("cuda")) {
    ordinal_text = entry.substr(std::string_view("cuda").size());
  } else if (!ordinal_of(entry)) {
    return bad("unknown device");
  }
  if (ordinal_text != entry) {
    if (ordinal_text.empty()) {
      ordinal_text = "0";
    } else if (ordinal_text.front() == ':') {
      ordinal_text.remove_prefix(1);
    } else {
      return bad("unknown device");
    }
  }
  const std::optional<int> ordinal = ordinal_of(ordinal_text);
  if (!ordinal) return bad("bad GPU ordinal in");
  if (*ordinal >= cuda_devices) {
    return invalid_argument(fmt::format("'{}' names GPU {}, but this host has {} usable GPU{}", entry, *ordinal,
                                        cuda_devices, cuda_devices == 1 ? "" : "s"));
  }
  return make_spec(std::string(entry), base, DeviceKind::cuda, *ordinal, isolation);
}

Status append_entry(std::string_view entry, int cuda_devices, const DeviceOptions& base,
                    std::vector<DeviceSpec>& specs) {
  if (entry == "all") {
    if (cuda_devices <= 0) {
      specs.push_back(make_spec("cpu", base, DeviceKind::cpu, 0, Isolation::in_process));
      return Status();
    }
    for (int ordinal = 0; ordinal < cuda_devices; ++ordinal)
      specs.push_back(
          make_spec(fmt::format("cuda:{}", ordinal), base, DeviceKind::cuda, ordinal, Isolation::in_process));
    return Status();
  }
  ACCEL_ASSIGN_OR_RETURN(DeviceSpec spec, parse_one(entry, cuda_devices, base, kEntries));
  specs.push_back(std::move(spec));
  return Status();
}

}  // namespace

Result<std::vector<DeviceSpec>> parse_device_list(std::string_view list, int cuda_devices, const DeviceOptions& base) {
  std::vector<DeviceSpec> specs;
  if (trim(list).empty()) return invalid_argument(fmt::format("device list is empty (entries: {})", kEntries));
  std::string_view rest = list;
  while (true) {
    const std::size_t comma = rest.find(',');
    const Status appended = append_entry(trim(rest.substr(0, comma)), cuda_devices, base, specs);
    if (!appended.ok()) return appended.with_context(fmt::format("device list '{}'", list));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return specs;
}

Result<std::vector<DeviceSpec>> parse_device_list(std::string_view list, const DeviceOptions& base) {
  return parse_device_list(list, Device::count(DeviceKind::cuda), base);
}

Result<DeviceOptions> parse_device_choice(std::string_view choice, int cuda_devices, const DeviceOptions& base) {
  if (choice == "auto") {
    return make_spec("auto", base, cuda_devices > 0 ? DeviceKind::cuda : DeviceKind::cpu, 0, Isolation::in_process)
        .options;
  }
  ACCEL_ASSIGN_OR_RETURN(DeviceSpec spec, parse_one(choice, cuda_devices, base, kDeviceChoices));
  return std::move(spec.options);
}

Result<DeviceOptions> parse_device_choice(std::string_view choice, const DeviceOptions& base) {
  // Counting GPUs initialises the CUDA driver in this process: only a name that could be an in-process GPU does.
  // A CPU needs no driver, and an isolated GPU's worker initialises a driver of its own and finds out itself whether
  // its ordinal exists (as embed::Model::open leaves the driver to it).
  const bool uncounted =
      choice == "cpu" || choice == "cpu:0" || choice.starts_with("cpu-isolated") || choice.starts_with("cuda-isolated");
  return parse_device_choice(choice, uncounted ? std::numeric_limits<int>::max() : Device::count(DeviceKind::cuda),
                             base);
}

std::string_view to_string(PlacementPolicy policy) noexcept {
  switch (policy) {
    case PlacementPolicy::least_loaded: return "least_loaded";
    case PlacementPolicy::round_robin: return "round_robin";
    case PlacementPolicy::most_free_memory: return "most_free_memory";
  }
  return "unknown";
}

Result<PlacementPolicy> parse_placement_policy(std::string_view name) {
  std::string normal(name);
  for (char& c : normal) c = c == '-' ? '_' : c;
  for (PlacementPolicy policy :
       {PlacementPolicy::least_loaded, PlacementPolicy::round_robin, PlacementPolicy::most_free_memory}) {
    if (normal == to_string(policy)) return policy;
  }
  return invalid_argument(
      fmt::format("unknown placement policy '{}' (least_loaded, round_robin or most_free_memory)", name));
}

}  // namespace accel
