// Device lists ("cpu,cuda-isolated:1,all") and placement policy names: the text side of accel::DevicePool.
#include <fmt/format.h>

#include <charconv>

#include "accel/device/pool.hpp"

namespace accel {
namespace {

constexpr std::string_view kEntries = "cpu, cpu-isolated, cuda[:N], cuda-isolated[:N], N or all";

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

Status bad_entry(std::string_view list, std::string_view entry, std::string_view why) {
  return invalid_argument(fmt::format("device list '{}': {} '{}' ({})", list, why, entry, kEntries));
}

// The ordinal of "N" (all digits), or nothing.
std::optional<int> ordinal_of(std::string_view digits) {
  int value = 0;
  if (digits.empty() || digits.size() > 6) return std::nullopt;
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

Status append_entry(std::string_view list, std::string_view entry, int cuda_devices, const DeviceOptions& base,
                    std::vector<DeviceSpec>& specs) {
  if (entry.empty()) return bad_entry(list, entry, "empty entry");
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
  if (entry == "cpu" || entry == "cpu:0") {
    specs.push_back(make_spec(std::string(entry), base, DeviceKind::cpu, 0, Isolation::in_process));
    return Status();
  }
  if (entry == "cpu-isolated" || entry == "cpu-isolated:0") {
    specs.push_back(make_spec(std::string(entry), base, DeviceKind::cpu, 0, Isolation::worker_process));
    return Status();
  }
  Isolation isolation = Isolation::in_process;
  std::string_view ordinal_text = entry;
  if (entry.starts_with("cuda-isolated")) {
    isolation = Isolation::worker_process;
    ordinal_text = entry.substr(std::string_view("cuda-isolated").size());
  } else if (entry.starts_with("cuda")) {
    ordinal_text = entry.substr(std::string_view("cuda").size());
  } else if (!ordinal_of(entry)) {
    return bad_entry(list, entry, "unknown device");
  }
  if (ordinal_text != entry) {
    if (ordinal_text.empty()) {
      ordinal_text = "0";
    } else if (ordinal_text.front() == ':') {
      ordinal_text.remove_prefix(1);
    } else {
      return bad_entry(list, entry, "unknown device");
    }
  }
  const std::optional<int> ordinal = ordinal_of(ordinal_text);
  if (!ordinal) return bad_entry(list, entry, "bad GPU ordinal in");
  if (*ordinal >= cuda_devices) {
    return invalid_argument(fmt::format("device list '{}': '{}' names GPU {}, but this host has {} usable GPU{}", list,
                                        entry, *ordinal, cuda_devices, cuda_devices == 1 ? "" : "s"));
  }
  specs.push_back(make_spec(std::string(entry), base, DeviceKind::cuda, *ordinal, isolation));
  return Status();
}

}  // namespace

Result<std::vector<DeviceSpec>> parse_device_list(std::string_view list, int cuda_devices, const DeviceOptions& base) {
  std::vector<DeviceSpec> specs;
  if (trim(list).empty()) return invalid_argument(fmt::format("device list is empty (entries: {})", kEntries));
  std::string_view rest = list;
  while (true) {
    const std::size_t comma = rest.find(',');
    ACCEL_RETURN_IF_ERROR(append_entry(list, trim(rest.substr(0, comma)), cuda_devices, base, specs));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return specs;
}

Result<std::vector<DeviceSpec>> parse_device_list(std::string_view list, const DeviceOptions& base) {
  return parse_device_list(list, Device::count(DeviceKind::cuda), base);
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
