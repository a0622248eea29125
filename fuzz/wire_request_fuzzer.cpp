// The worker's side of the request ring: a slot's tag and payload, read as the worker reads them
// (visit_request), then for a library request the checks the worker's device runs on it before any buffer is
// touched (validate, then the operand list). Staged requests' encodings are staged_request_fuzzer's.
//
// Input: one byte of tag (DeviceProtocol has fewer than 256 requests), then the payload, cut to what a slot holds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <variant>

#include "device/isolated/channel.hpp"
#include "device/isolated/wire.hpp"

namespace {

using namespace accel;
using namespace accel::device::isolated;

static_assert([]<class... Requests>(Protocol<Requests...>) { return sizeof...(Requests); }(DeviceProtocol{}) <= 256,
              "the input's tag is one byte");

template <class Request, class List>
struct InList;
template <class Request, class... Requests>
struct InList<Request, RequestList<Requests...>> : std::bool_constant<(std::is_same_v<Request, Requests> || ...)> {};

template <class Request>
void check(const Request& request) {
  if constexpr (InList<Request, LibraryRequests>::value) {
    Result<typename Operation<Request>::Checked> checked = Operation<Request>::validate(request);
    if (!checked.ok()) return;
    Operands operands;
    Operation<Request>::operands(request, *checked, operands);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  const std::size_t payload = std::min(size - 1, kRequestSlotBytes - Ring::kSequenceBytes - sizeof(MessageHeader));
  visit_request(data[0], std::span<const std::byte>(bytes + 1, payload), [](auto& request) { check(request); });
  return 0;
}
