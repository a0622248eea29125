// `accel serve`'s per-model options: each given once (for every model) or once per --model (matched by position);
// any other count, one served name for several models, a name twice or an --auto-truncate that is not true or false
// refused naming the option; and the refusals and --help of the program itself.
#include "cli/serve_model_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/run_cli.hpp"

namespace accel::cli {
namespace {

using ::testing::HasSubstr;

TEST(ServeModelOptions, NothingGivenLeavesEveryModelWithTheServersOptions) {
  Result<std::vector<serve::ModelServeOptions>> options = model_serve_options(3, {});
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  ASSERT_EQ(options->size(), 3u);
  for (const serve::ModelServeOptions& model : *options) {
    EXPECT_EQ(model.name, "");
    EXPECT_FALSE(model.batch_tokens || model.max_batch_requests || model.auto_truncate || model.default_prompt_name ||
                 model.default_prompt || model.compute);
  }
}

TEST(ServeModelOptions, OnceIsForEveryModelAndOncePerModelIsByPosition) {
  Result<std::vector<serve::ModelServeOptions>> options =
      model_serve_options(3, {.served_names = {"a", "b", "c"},
                              .batch_tokens = {4096},
                              .max_batch_requests = {8, 16, 32},
                              .auto_truncate = {"true", "false", "true"},
                              .dtypes = {"bf16", "auto", "f32"},
                              .default_prompts = {"query: ", "", "passage: "}});
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  const std::vector<serve::ModelServeOptions>& got = *options;
  EXPECT_EQ(got[0].name, "a");
  EXPECT_EQ(got[2].name, "c");
  for (const serve::ModelServeOptions& model : got) EXPECT_EQ(model.batch_tokens, 4096u);
  EXPECT_EQ(got[1].max_batch_requests, 16u);
  EXPECT_EQ(got[0].auto_truncate, true);
  EXPECT_EQ(got[1].auto_truncate, false);
  EXPECT_EQ(got[1].default_prompt, "");
  EXPECT_EQ(got[2].default_prompt, "passage: ");
  EXPECT_FALSE(got[0].default_prompt_name);
  EXPECT_EQ(got[0].compute, DType::bf16);
  EXPECT_FALSE(got[1].compute);  // auto: the device's default
  EXPECT_EQ(got[2].compute, DType::f32);
}

TEST(ServeModelOptions, TheOptionsApplyOverTheServersAndAPromptReplacesTheOtherKind) {
  serve::ServeOptions server;
  server.default_prompt_name = "query";
  server.batching.batch_tokens = 2048;
  serve::ServeOptions applied =
      with_model_options(server, {.max_batch_requests = 4, .auto_truncate = true, .default_prompt = "q: "});
  EXPECT_EQ(applied.batching.batch_tokens, 2048u);
  EXPECT_EQ(applied.batching.max_requests, 4u);
  EXPECT_TRUE(applied.auto_truncate);
  EXPECT_EQ(applied.default_prompt, "q: ");
  EXPECT_FALSE(applied.default_prompt_name);
  applied = with_model_options(server, {.default_prompt_name = ""});  // back to the folder's own
  EXPECT_FALSE(applied.default_prompt_name || applied.default_prompt);
  // A budget the model does not set holds its longest sequence (a 32K context's); one it sets stays as given.
  EXPECT_EQ(with_model_options(server, {}, 32768).batching.batch_tokens, 32768u);
  EXPECT_EQ(with_model_options(server, {}, 512).batching.batch_tokens, 2048u);
  EXPECT_EQ(with_model_options(server, {.batch_tokens = 4096}, 32768).batching.batch_tokens, 4096u);
}

TEST(ServeModelOptions, AmbiguousCountsAreRefusedNamingTheOption) {
  auto refused = [](std::size_t models, const PerModelArguments& given) {
    Result<std::vector<serve::ModelServeOptions>> options = model_serve_options(models, given);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.status().to_string();
  };
  EXPECT_THAT(refused(3, {.batch_tokens = {1024, 2048}}), HasSubstr("--batch-tokens is given 2 times for 3 --model"));
  EXPECT_THAT(refused(1, {.max_batch_requests = {1, 2}}), HasSubstr("--max-batch-requests is given 2 times"));
  EXPECT_THAT(refused(2, {.default_prompt_names = {"a", "b", "c"}}), HasSubstr("--default-prompt-name"));
  EXPECT_THAT(refused(2, {.served_names = {"a"}}), HasSubstr("--served-model-name is given once for 2 --model"));
  EXPECT_THAT(refused(2, {.served_names = {"a", "a"}}), HasSubstr("'a' is given twice"));
  EXPECT_THAT(refused(1, {.served_names = {""}}), HasSubstr("empty"));
  EXPECT_THAT(refused(2, {.auto_truncate = {"true", "maybe"}}), HasSubstr("--auto-truncate=maybe"));
  EXPECT_THAT(refused(2, {.dtypes = {"f32", "bf16", "f16"}}), HasSubstr("--dtype is given 3 times"));
  EXPECT_THAT(refused(1, {.dtypes = {"f64"}}), HasSubstr("unknown dtype 'f64'"));
  EXPECT_TRUE(model_serve_options(1, {.served_names = {"only"}}).ok());
}

TEST(ServeCommand, RefusesAmbiguousOptionsBeforeLoadingAnything) {
  const auto ran = accel::testing::run_cli(
      "serve --device cpu --model /nonexistent/a --model /nonexistent/b --batch-tokens 1024 --batch-tokens 2048 "
      "--batch-tokens 4096 --port 0");
  EXPECT_EQ(ran.exit_code, 1) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("--batch-tokens is given 3 times for 2 --model"));
  EXPECT_THAT(ran.out, ::testing::Not(HasSubstr("listening")));
}

TEST(ServeCommand, RefusesABadDeviceListNamingTheEntryBeforeListening) {
  const auto ran = accel::testing::run_cli("serve --devices cpu,tpu:0 --model /nonexistent/a --port 0");
  EXPECT_EQ(ran.exit_code, 1) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("unknown device 'tpu:0'"));
  EXPECT_THAT(ran.out, ::testing::Not(HasSubstr("listening")));
  const auto both = accel::testing::run_cli("serve --device cpu --devices cpu,cpu --port 0");
  EXPECT_NE(both.exit_code, 0) << both.out;
  EXPECT_THAT(both.out, HasSubstr("excludes"));
}

TEST(ServeCommand, HelpSaysWhichOptionsArePerModel) {
  const auto ran = accel::testing::run_cli("serve --help");
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("--served-model-name"));
  EXPECT_THAT(ran.out, HasSubstr("--max-batch-requests"));
  EXPECT_THAT(ran.out, HasSubstr("once per --model"));
  EXPECT_THAT(ran.out, HasSubstr("--devices"));
}

}  // namespace
}  // namespace accel::cli
