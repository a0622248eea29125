// The staging region's encodings of requests that are not plain data (every kStaged request of DeviceProtocol:
// RunGraph, LaunchKernel, CutlassGroupedGemm, graph::Execute, collective::Group), decoded as the worker decodes them
// (decode_staged), then validated and their operands listed as the worker's device does before it touches a buffer.
//
// Input: one byte choosing the request (its index in StagedRequests, modulo their number), then its encoding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>

#include "device/isolated/staged_requests.hpp"
#include "staged_kinds.hpp"

namespace {

using namespace accel;
using fuzzing::StagedRequests;

template <class Request>
void decode(std::span<const std::byte> encoding) {
  Result<Request> request = device::isolated::decode_staged<Request>(encoding);
  if (!request.ok()) return;
  if constexpr (ProtocolOf<LibraryRequests>::accepts<Request>) {  // a device request (RunRecorded) is decoded only
    Result<typename Operation<Request>::Checked> checked = Operation<Request>::validate(*request);
    if (!checked.ok()) return;
    Operands operands;
    Operation<Request>::operands(*request, *checked, operands);
  }
}

template <std::size_t... I>
void decode_as(std::size_t which, std::span<const std::byte> encoding, std::index_sequence<I...>) {
  (void)((which == I ? (decode<std::tuple_element_t<I, StagedRequests>>(encoding), true) : false) || ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  constexpr std::size_t kKinds = std::tuple_size_v<StagedRequests>;
  decode_as(data[0] % kKinds, std::span<const std::byte>(bytes + 1, size - 1), std::make_index_sequence<kKinds>());
  return 0;
}
