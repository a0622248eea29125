#include "accel/core/status.hpp"

#include <gtest/gtest.h>

#include "accel/core/result.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

TEST(Status, DefaultIsOkAndCostsOnePointer) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::ok);
  EXPECT_EQ(sizeof(Status), sizeof(void*));
}

TEST(Status, CarriesCodeSourceRawCodeAndMessage) {
  Status s(Code::internal, "launch failed", Source::cublas, 14);
  EXPECT_EQ(s.code(), Code::internal);
  EXPECT_EQ(s.source(), Source::cublas);
  EXPECT_EQ(s.raw_code(), 14);
  EXPECT_EQ(s.to_string(), "internal [cublas 14]: launch failed");
  EXPECT_EQ(stale_handle("x").to_string(), "stale_handle: x");
}

TEST(Status, CopiesAreDeepAndCompareEqual) {
  Status a = invalid_argument("bad m");
  Status b = a;
  EXPECT_EQ(a, b);
  b = a.with_context("gemm");
  EXPECT_EQ(b.message(), "gemm: bad m");
  EXPECT_EQ(a.message(), "bad m");
}

TEST(Status, UpdateKeepsTheFirstError) {
  Status s;
  s.update(Status());
  EXPECT_THAT(s, IsOk());
  s.update(not_supported("first"));
  s.update(internal_error("second"));
  EXPECT_THAT(s, StatusIs(Code::not_supported, "first"));
}

TEST(Result, HoldsAValueOrAnError) {
  Result<int> value = 7;
  EXPECT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  Result<int> error = resource_exhausted("mailbox full");
  EXPECT_FALSE(error.ok());
  EXPECT_THAT(error, StatusIs(Code::resource_exhausted, "mailbox full"));
  EXPECT_EQ(error.value_or(3), 3);
}

TEST(Result, AnOkStatusWithoutAValueBecomesAnInternalError) {
  Result<int> r = Status();
  EXPECT_THAT(r, StatusIs(Code::internal, "OK status without a value"));
}

TEST(Result, ValueOfAnErrorAborts) {
  Result<int> r = invalid_argument("no value here");
  EXPECT_DEATH((void)r.value(), "no value here");
}

Result<int> half(int x) {
  if (x % 2) return invalid_argument("odd");
  return x / 2;
}

Result<int> quarter(int x) {
  ACCEL_ASSIGN_OR_RETURN(int h, half(x));
  ACCEL_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

Status check_even(int x) {
  ACCEL_RETURN_IF_ERROR(half(x).status());
  return Status();
}

TEST(Result, PropagationMacrosReturnTheFirstError) {
  EXPECT_EQ(*quarter(8), 2);
  EXPECT_THAT(quarter(6), StatusIs(Code::invalid_argument, "odd"));
  EXPECT_THAT(check_even(4), IsOk());
  EXPECT_THAT(check_even(5), StatusIs(Code::invalid_argument));
}

}  // namespace
}  // namespace accel
