// What the client of an isolated device trusts of what its worker writes into shared memory: nothing it reads
// there may crash it or be taken for more than an error of the request involved.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "device/isolated/channel.hpp"
#include "device/isolated/wire.hpp"
#include "testing/status_matchers.hpp"

namespace accel::device::isolated {
namespace {

using testing::StatusIs;

std::vector<std::byte> reply_with(std::uint8_t code, std::uint8_t source) {
  std::vector<std::byte> slot(kReplySlotBytes);
  ByteWriter out(slot);
  out.pod(code).pod(source).pod(std::int64_t{0}).string("scribbled");
  slot.resize(out.size());
  return slot;
}

TEST(IsolatedTrust, AReplyWithAStatusCodeOrSourceThatDoesNotExistIsAnInternalError) {
  EXPECT_THAT(decode_reply<Done>(reply_with(200, 0)).status(), StatusIs(Code::internal, "status code 200"));
  EXPECT_THAT(decode_reply<Done>(reply_with(kCodeCount, 0)).status(), StatusIs(Code::internal, "do not exist"));
  EXPECT_THAT(decode_reply<Done>(reply_with(1, kSourceCount)).status(), StatusIs(Code::internal, "do not exist"));
  EXPECT_THAT(decode_reply<Done>(reply_with(static_cast<std::uint8_t>(Code::internal), 0)).status(),
              StatusIs(Code::internal, "scribbled"));
}

TEST(IsolatedTrust, AFailedStartIsNeverOkAndItsMessageIsReadWithinItsSlot) {
  WorkerSlot slot;
  slot.start_error_code = static_cast<std::uint8_t>(Code::not_supported);
  std::strcpy(slot.start_error, "no GPU");
  EXPECT_THAT(start_failure(slot), StatusIs(Code::not_supported, "no GPU"));

  // What a scribbled slot may say: no error at all, a code that does not exist, a message without its end.
  std::memset(slot.start_error, 'x', sizeof slot.start_error);
  for (const std::uint8_t code : {std::uint8_t{0}, static_cast<std::uint8_t>(kCodeCount), std::uint8_t{255}}) {
    SCOPED_TRACE(code);
    slot.start_error_code = code;
    const Status failure = start_failure(slot);
    EXPECT_THAT(failure, StatusIs(Code::unavailable, "which is not an error"));
    EXPECT_NE(failure.message().find(std::string(sizeof slot.start_error, 'x')), std::string::npos);
    EXPECT_EQ(failure.message().find(std::string(sizeof slot.start_error + 1, 'x')), std::string::npos);
  }
}

}  // namespace
}  // namespace accel::device::isolated
