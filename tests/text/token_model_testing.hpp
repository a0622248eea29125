// Shared by the token model tests: loading a model from JSON text, comparing its tokens with tokenizers', and
// checking a refusal.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer/components.hpp"

namespace accel::text::testing {

struct ExpectedToken {
  std::int32_t id = 0;
  std::string value;
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct Case {
  std::string word;
  std::vector<ExpectedToken> tokens;
};

inline std::unique_ptr<TokenModel> load_model_object(const nlohmann::json& object) {
  auto model = make_token_model(object, "model");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return model.ok() ? std::move(*model) : nullptr;
}

inline std::unique_ptr<TokenModel> load_model(std::string_view json_text) {
  return load_model_object(nlohmann::json::parse(json_text));
}

inline void expect_tokens(const TokenModel& model, const Case& expected) {
  std::vector<Token> tokens;
  model.tokenize(expected.word, tokens);
  ASSERT_EQ(tokens.size(), expected.tokens.size()) << expected.word;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(tokens[i].id, expected.tokens[i].id) << expected.word << " token " << i;
    EXPECT_EQ(tokens[i].value, expected.tokens[i].value) << expected.word << " token " << i;
    EXPECT_EQ(tokens[i].offsets, (Range{expected.tokens[i].begin, expected.tokens[i].end}))
        << expected.word << " token " << i;
  }
}

inline void expect_tokens(std::string_view model_json, const std::vector<Case>& cases) {
  const auto model = load_model(model_json);
  ASSERT_NE(model, nullptr);
  for (const Case& expected : cases) expect_tokens(*model, expected);
}

// make_token_model refuses `object` with invalid_argument, its message holding `expected_text` (the field's path,
// and often the value).
inline void expect_refused(const nlohmann::json& object, std::string_view expected_text) {
  const auto model = make_token_model(object, "model");
  ASSERT_FALSE(model.ok()) << expected_text;
  EXPECT_EQ(model.code(), Code::invalid_argument);
  EXPECT_NE(model.status().message().find(expected_text), std::string_view::npos) << model.status().message();
}

// `json_text` with `key` set to `value` (or removed, for a discarded value).
inline nlohmann::json with_field(std::string_view json_text, const std::string& key, const nlohmann::json& value) {
  nlohmann::json object = nlohmann::json::parse(json_text);
  if (value.is_discarded()) {
    object.erase(key);
  } else {
    object[key] = value;
  }
  return object;
}

inline const nlohmann::json kRemoved = nlohmann::json(nlohmann::json::value_t::discarded);

}  // namespace accel::text::testing
