// The requests that cross to an isolated worker encoded in the staging region (kStaged), in DeviceProtocol's order.
// Taken from the protocol rather than listed, so that a family's new staged request is fuzzed (staged_request_fuzzer
// picks one by its index here) and seeded (make_corpus) without anyone remembering to name it.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "accel/device/protocol.hpp"
#include "device/isolated/staged_requests.hpp"

namespace accel::fuzzing {

namespace detail {
template <class P>
struct StagedOf;
template <class... Requests>
struct StagedOf<Protocol<Requests...>> {
  using type = decltype(std::tuple_cat(
      std::declval<std::conditional_t<device::isolated::kStaged<Requests>, std::tuple<Requests>, std::tuple<>>>()...));
};

template <class Request, class Tuple>
struct IndexOf;
template <class Request, class... Requests>
struct IndexOf<Request, std::tuple<Requests...>> {
  static constexpr std::size_t value = [] {
    std::size_t index = 0;
    [[maybe_unused]] const bool found = ((std::is_same_v<Request, Requests> ? true : (++index, false)) || ...);
    return index;
  }();
};
}  // namespace detail

using StagedRequests = typename detail::StagedOf<DeviceProtocol>::type;

// The first byte of a staged_request input that selects Request.
template <class Request>
inline constexpr std::size_t kStagedIndex = detail::IndexOf<Request, StagedRequests>::value;

}  // namespace accel::fuzzing
