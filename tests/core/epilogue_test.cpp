#include "accel/core/epilogue.hpp"

#include <gtest/gtest.h>

#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

// Values computed independently (Python's math module), so that the one definition every CPU reference uses is
// pinned to the formulas the libraries document.
TEST(Epilogue, EachActivationGivesItsDocumentedValue) {
  struct Case {
    Activation activation;
    double x;
    double want;
  };
  for (const Case& c :
       {Case{Activation::identity, -2.5, -2.5}, Case{Activation::relu, -2.0, 0.0}, Case{Activation::relu, 1.5, 1.5},
        Case{Activation::gelu_tanh, 1.0, 0.8411919906082768}, Case{Activation::gelu_tanh, -2.0, -0.04540230591222494},
        Case{Activation::gelu_erf, 1.0, 0.8413447460685429}, Case{Activation::gelu_erf, -2.0, -0.04550026389635842},
        Case{Activation::silu, 1.0, 0.7310585786300049}, Case{Activation::silu, -2.0, -0.2384058440442351},
        Case{Activation::sigmoid, 1.0, 0.7310585786300049}, Case{Activation::sigmoid, 0.0, 0.5},
        Case{Activation::tanh, 1.0, 0.7615941559557649}, Case{Activation::log1p_relu, 1.0, 0.6931471805599453},
        Case{Activation::log1p_relu, -2.0, 0.0}}) {
    EXPECT_NEAR(activate(c.activation, c.x), c.want, 1e-15) << to_string(c.activation) << "(" << c.x << ")";
  }
}

TEST(Epilogue, AnActivationOrBiasOutsideTheFusedListsIsNotSupportedAndNamed) {
  const auto check = [](Epilogue epilogue) {
    return check_fusable("Family", epilogue, {Activation::identity, Activation::relu},
                         {BiasVector::none, BiasVector::per_column});
  };
  EXPECT_THAT(check({}), IsOk());
  EXPECT_THAT(check({.activation = Activation::relu, .bias = BiasVector::per_column}), IsOk());
  EXPECT_THAT(check({.activation = Activation::silu}),
              StatusIs(Code::not_supported, "Family does not fuse the activation silu (it fuses identity, relu)"));
  EXPECT_THAT(check({.bias = BiasVector::per_row}),
              StatusIs(Code::not_supported, "Family does not fuse a per_row bias (it takes none, per_column)"));
}

TEST(Epilogue, ItsTextNamesTheActivationAndTheBias) {
  EXPECT_EQ(to_string(Epilogue{}), "identity");
  EXPECT_EQ(to_string(Epilogue{.activation = Activation::gelu_erf, .bias = BiasVector::per_channel}),
            "gelu_erf + per_channel bias");
}

}  // namespace
}  // namespace accel
