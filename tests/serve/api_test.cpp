#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "serve/api_error.hpp"
#include "serve/base64.hpp"
#include "serve/float_json.hpp"
#include "serve/openai_api.hpp"
#include "serve/tei_api.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;

const RequestLimits kLimits{
    .max_inputs = 4, .max_sequence_length = 8, .dimensions = 3, .vocabulary = 100, .normalized = true};

EmbedRequest parsed(const ApiResult<EmbedRequest>& result) {
  if (const auto* error = std::get_if<ApiError>(&result)) {
    ADD_FAILURE() << error->status << " " << error->message;
    return {};
  }
  return std::get<EmbedRequest>(result);
}

ApiError refused(const ApiResult<EmbedRequest>& result) {
  if (const auto* error = std::get_if<ApiError>(&result)) return *error;
  ADD_FAILURE() << "the request was accepted";
  return {};
}

TEST(OpenAiApi, AcceptsEachShapeOfInput) {
  EXPECT_EQ(parsed(parse_openai_request(R"({"input":"hello","model":"m"})", kLimits)).texts,
            std::vector<std::string>{"hello"});
  EXPECT_EQ(parsed(parse_openai_request(R"({"input":["a","b"]})", kLimits)).texts,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parsed(parse_openai_request(R"({"input":[1,2,3]})", kLimits)).token_inputs,
            (std::vector<std::vector<std::int32_t>>{{1, 2, 3}}));
  const EmbedRequest tokens = parsed(parse_openai_request(
      R"({"input":[[1,2],[3]],"encoding_format":"base64","dimensions":3,"model":"x","user":"u"})", kLimits));
  EXPECT_EQ(tokens.token_inputs, (std::vector<std::vector<std::int32_t>>{{1, 2}, {3}}));
  EXPECT_EQ(tokens.encoding, Encoding::base64);
  EXPECT_EQ(tokens.model, "x");
  EXPECT_FALSE(tokens.text.truncate.has_value());
}

TEST(OpenAiApi, NamesTheFieldOfEveryRefusal) {
  struct Case {
    const char* body;
    int status;
    const char* param;
    const char* code;
  };
  const Case cases[] = {
      {"{not json", 400, "", "invalid_json"},
      {"[1]", 400, "", "invalid_type"},
      {R"({"model":"m"})", 400, "input", "missing_field"},
      {R"({"input":5})", 400, "input", "invalid_type"},
      {R"({"input":[]})", 400, "input", "empty_input"},
      {R"({"input":["a",1]})", 400, "input[1]", "invalid_type"},
      {R"({"input":[[1],"a"]})", 400, "input[1]", "invalid_type"},
      {R"({"input":[[1],[]]})", 400, "input[1]", "empty_input"},
      {R"({"input":[[1,2.5]]})", 400, "input[0][1]", "invalid_type"},
      {R"({"input":[[1,100]]})", 400, "input[0][1]", "invalid_token"},
      {R"({"input":[-1]})", 400, "input[0]", "invalid_token"},
      {R"({"input":[1,2,3,4,5,6,7,8,9]})", 413, "input", "input_too_long"},
      {R"({"input":["a","b","c","d","e"]})", 413, "input", "too_many_inputs"},
      {R"({"input":"a","model":3})", 400, "model", "invalid_type"},
      {R"({"input":"a","encoding_format":"int4"})", 400, "encoding_format", "invalid_value"},
      {R"({"input":"a","dimensions":4})", 400, "dimensions", "invalid_value"},
      {R"({"input":"a","dimensions":0})", 400, "dimensions", "invalid_value"},
      {R"({"input":"a","truncate":1})", 400, "truncate", "invalid_type"},
      {R"({"input":"a","truncation_direction":"up"})", 400, "truncation_direction", "invalid_value"},
      {R"({"input":"a","prompt_name":7})", 400, "prompt_name", "invalid_type"},
      {R"({"input":"a","dimensions":"3"})", 400, "dimensions", "invalid_type"},
  };
  for (const Case& c : cases) {
    const ApiError error = refused(parse_openai_request(c.body, kLimits));
    EXPECT_EQ(error.status, c.status) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
    EXPECT_EQ(error.code, c.code) << c.body;
    if (!error.param.empty()) {
      EXPECT_NE(error.message.find(error.param), std::string::npos) << error.message;
    }
  }
}

TEST(OpenAiApi, ErrorBodyHasOpenAisShape) {
  const json body = json::parse(ApiError{413, "too many", "input", "too_many_inputs"}.openai_body());
  EXPECT_EQ(body, json::parse(R"({"error":{"message":"too many","type":"invalid_request_error","param":"input",
                                 "code":"too_many_inputs"}})"));
  const json bare = json::parse(ApiError{429, "full", "", "queue_full"}.openai_body());
  EXPECT_TRUE(bare["error"]["param"].is_null());
  EXPECT_EQ(bare["error"]["type"], "rate_limit_error");
}

embed::Embeddings two_embeddings() {
  return {.dimensions = 3, .values = {0.25f, -0.5f, 1.0f / 3.0f, 1e-8f, 0.0f, -1.0f}, .tokens = {4, 7}};
}

TEST(OpenAiApi, ResponseCarriesEveryEmbeddingItsIndexAndUsage) {
  EmbedRequest request;
  request.model = "all-MiniLM-\"L6\"";
  const json body = json::parse(openai_response(two_embeddings(), request));
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "all-MiniLM-\"L6\"");
  EXPECT_EQ(body["usage"], json::parse(R"({"prompt_tokens":11,"total_tokens":11})"));
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][1]["object"], "embedding");
  EXPECT_EQ(body["data"][1]["index"], 1);
  // Each float is written so that it reads back exactly.
  const std::vector<float> first = body["data"][0]["embedding"].get<std::vector<float>>();
  EXPECT_EQ(first, (std::vector<float>{0.25f, -0.5f, 1.0f / 3.0f}));
  EXPECT_EQ(body["data"][1]["embedding"].get<std::vector<float>>(), (std::vector<float>{1e-8f, 0.0f, -1.0f}));
}

TEST(OpenAiApi, Base64IsTheLittleEndianFloatBytes) {
  EmbedRequest request;
  request.encoding = Encoding::base64;
  const json body = json::parse(openai_response(two_embeddings(), request));
  // 0.25f = 0x3E800000, -0.5f = 0xBF000000, 1/3 = 0x3EAAAAAB: bytes 00 00 80 3E 00 00 00 BF AB AA AA 3E.
  EXPECT_EQ(body["data"][0]["embedding"], "AACAPgAAAL+rqqo+");
}

TEST(FloatJson, EveryFloatReadsBackExactly) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> values{0.0f, -0.0f, 1e-38f, 3.4e38f, -0.11133908f};
  for (int i = 0; i < 100000; ++i) values.push_back(unit(rng) * std::pow(10.0f, static_cast<float>(i % 12 - 8)));
  std::string text;
  append_json_floats(text, values);
  EXPECT_EQ(json::parse(text).get<std::vector<float>>(), values);
}

TEST(Base64, PadsTheLastGroup) {
  auto encode = [](std::string_view text) {
    std::string out;
    append_base64(out, std::as_bytes(std::span(text.data(), text.size())));
    return out;
  };
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
}

TEST(TeiApi, AcceptsAStringOrStringsWithItsOptions) {
  auto parse = [](const char* body, const RequestLimits& limits = kLimits) {
    return parse_tei_embed_request(body, limits, TeiEmbedKind::dense);
  };
  EXPECT_EQ(parsed(parse(R"({"inputs":"hi"})")).texts, std::vector<std::string>{"hi"});
  const EmbedRequest request = parsed(parse(
      R"({"inputs":["a","b"],"truncate":true,"normalize":true,"truncation_direction":"Left","prompt_name":"query",)"
      R"("dimensions":2})"));
  EXPECT_EQ(request.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(request.text.truncate, true);
  EXPECT_EQ(request.text.direction, embed::Truncation::left);
  EXPECT_EQ(request.text.prompt_name, "query");
  EXPECT_EQ(request.dimensions, 2u);
  EXPECT_TRUE(request.normalize);
  EXPECT_FALSE(parsed(parse(R"({"inputs":"a"})")).text.truncate.has_value());
  // A model whose rows are not unit length may be answered as they are.
  RequestLimits raw = kLimits;
  raw.normalized = false;
  EXPECT_FALSE(parsed(parse(R"({"inputs":"a","normalize":false})", raw)).normalize);
}

TEST(TeiApi, NamesTheFieldOfEveryRefusal) {
  struct Case {
    const char* body;
    int status;
    const char* param;
  };
  const Case cases[] = {
      {"", 400, ""},
      {R"({"input":"a"})", 400, "inputs"},
      {R"({"inputs":[1]})", 400, "inputs[0]"},
      {R"({"inputs":{}})", 400, "inputs"},
      {R"({"inputs":"a","truncate":"yes"})", 400, "truncate"},
      {R"({"inputs":"a","normalize":false})", 400, "normalize"},
      {R"({"inputs":"a","prompt_name":1})", 400, "prompt_name"},
      {R"({"inputs":"a","dimensions":4})", 400, "dimensions"},
      {R"({"inputs":"a","truncation_direction":false})", 400, "truncation_direction"},
      {R"({"inputs":["a","b","c","d","e"]})", 413, "inputs"},
  };
  for (const Case& c : cases) {
    const ApiError error = refused(parse_tei_embed_request(c.body, kLimits, TeiEmbedKind::dense));
    EXPECT_EQ(error.status, c.status) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
  }
}

TEST(TeiApi, ResponseIsAnArrayOfEmbeddingsAndErrorsHaveTeisShape) {
  EXPECT_EQ(json::parse(tei_embed_response(two_embeddings())).get<std::vector<std::vector<float>>>(),
            (std::vector<std::vector<float>>{{0.25f, -0.5f, 1.0f / 3.0f}, {1e-8f, 0.0f, -1.0f}}));
  EXPECT_EQ(json::parse(ApiError{413, "long", "inputs", "input_too_long"}.tei_body()),
            json::parse(R"({"error":"long","error_type":"Validation"})"));
  EXPECT_EQ(json::parse(ApiError{429, "full"}.tei_body())["error_type"], "Overloaded");
  EXPECT_EQ(json::parse(ApiError{503, "loading"}.tei_body())["error_type"], "Unhealthy");
}

TEST(ApiError, MapsTheModelsErrorsAndTheQueuesRefusals) {
  EXPECT_EQ(ApiError::from(invalid_argument("text 3 is not UTF-8")).status, 400);
  EXPECT_EQ(ApiError::from(resource_exhausted("out of memory")).status, 429);
  EXPECT_EQ(ApiError::refused(resource_exhausted("full")).code, "queue_full");
  EXPECT_EQ(ApiError::refused(failed_precondition("stopping")).status, 503);
  const ApiError lost = ApiError::from(context_lost("worker died"));
  EXPECT_EQ(lost.status, 503);
  EXPECT_EQ(lost.code, "context_lost");
  EXPECT_EQ(ApiError::from(internal_error("bug")).status, 500);
}

}  // namespace
}  // namespace accel::serve
