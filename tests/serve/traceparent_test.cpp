// The W3C traceparent parser: the spec's examples, each way a header can be malformed (refused: the server then
// starts a new trace), and later versions read as the spec tells a version-00 parser to read them.
#include "serve/traceparent.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace accel::serve {
namespace {

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, TheSpecsExampleIsReadIntoItsIdsAndFlags) {
  const std::optional<TraceContext> context = parse_traceparent(kValid);
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(to_hex(context->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(context->parent_id), "00f067aa0ba902b7");
  EXPECT_EQ(context->flags, 1);
  EXPECT_TRUE(context->sampled());
  EXPECT_EQ(context->version, 0);
  EXPECT_EQ(format_traceparent(*context), kValid);
}

TEST(Traceparent, AnyFlagsAreKeptAndOnlyBitZeroIsSampled) {
  const auto unsampled = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_FALSE(unsampled->sampled());
  const auto unknown = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fe");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->flags, 0xfe);
  EXPECT_FALSE(unknown->sampled());
}

TEST(Traceparent, EachMalformedFormIsRefused) {
  const std::string valid = kValid;
  const auto with = [&](std::size_t at, char c) {
    std::string header = valid;
    header[at] = c;
    return header;
  };
  const std::vector<std::string> malformed{
      std::string(),                                              // empty
      valid.substr(0, 54),                                        // one character short
      valid + "-",                                                // version 00 with more after it
      valid + "0",                                                // likewise, without a dash
      " " + valid,                                                // leading space: not our job to trim
      "ff" + valid.substr(2),                                     // version ff is invalid
      "0g" + valid.substr(2),                                     // version not hex
      "0A" + valid.substr(2),                                     // version in uppercase
      with(2, '_'),                                               // separator after the version
      with(35, '_'),                                              // separator after the trace id
      with(52, '_'),                                              // separator after the parent id
      with(3, 'A'),                                               // uppercase hex in the trace id
      with(36, 'F'),                                              // uppercase hex in the parent id
      with(20, 'g'),                                              // not hex in the trace id
      with(40, ' '),                                              // not hex in the parent id
      with(53, 'x'),                                              // flags not hex
      with(54, 'B'),                                              // flags in uppercase
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent id
      "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",  // a field one digit off
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",   // short flags (54 characters)
      "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",  // other separators
  };
  for (const std::string& header : malformed)
    EXPECT_FALSE(parse_traceparent(header).has_value()) << "'" << header << "'";
  std::string with_nul = valid;
  with_nul[10] = '\0';
  EXPECT_FALSE(parse_traceparent(with_nul).has_value());
}

TEST(Traceparent, ALaterVersionIsReadByVersion00sFieldsAndMayGoOnAfterADash) {
  const auto plain = parse_traceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->version, 0xcc);
  EXPECT_EQ(to_hex(plain->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  const auto extended =
      parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds");
  ASSERT_TRUE(extended.has_value());
  EXPECT_EQ(to_hex(extended->parent_id), "00f067aa0ba902b7");
  // After the flags, a later version too needs a dash or the end.
  EXPECT_FALSE(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x").has_value());
  // Its fields are still held to version 00's rules.
  EXPECT_FALSE(parse_traceparent("01-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01").has_value());
  EXPECT_FALSE(parse_traceparent("01-00000000000000000000000000000000-00f067aa0ba902b7-01").has_value());
  EXPECT_FALSE(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7").has_value());
  // A later version is written back as 00, the one version this writes.
  EXPECT_EQ(format_traceparent(*extended), kValid);
}

}  // namespace
}  // namespace accel::serve
