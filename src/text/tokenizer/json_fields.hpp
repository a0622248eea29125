// Reading a tokenizer.json's fields: the file is untrusted, so each read checks the field's kind and range and
// returns invalid_argument naming the field's path ("pre_tokenizer.pretokenizers[1].behavior") and the value it
// holds, shown with bad bytes replaced and cut short.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/core/result.hpp"

namespace accel::text::json_fields {

using nlohmann::json;

[[nodiscard]] std::string child(std::string_view path, std::string_view key);  // "a.b"
[[nodiscard]] std::string indexed(std::string_view path, std::size_t index);   // "a[3]"
[[nodiscard]] std::string shown(const json& value);                            // for messages

// "tokenizer.json: <path> is <value>; <why>".
[[nodiscard]] Status refused(std::string_view path, const json& value, std::string_view why);
// A component `type` we do not implement: "tokenizer.json: <path>.type is "X"; <stage> X is not supported (we
// run: <supported>)".
[[nodiscard]] Status unsupported_type(std::string_view path, std::string_view type, std::string_view stage,
                                      std::string_view supported);

// The member `key` of the object `parent` (at `path`); invalid_argument when `parent` is not an object or the
// member is missing. optional_member gives nullptr for a missing member (or one that is null).
Result<const json*> member(const json& parent, std::string_view path, std::string_view key);
Result<const json*> optional_member(const json& parent, std::string_view path, std::string_view key);

Result<std::string> string_member(const json& parent, std::string_view path, std::string_view key);
Result<bool> bool_member(const json& parent, std::string_view path, std::string_view key);
// A missing or null member gives `fallback`.
Result<bool> bool_member_or(const json& parent, std::string_view path, std::string_view key, bool fallback);
Result<std::string> string_member_or(const json& parent, std::string_view path, std::string_view key,
                                     std::string_view fallback);
// An integer in [0, limit].
Result<std::uint64_t> count_member(const json& parent, std::string_view path, std::string_view key,
                                   std::uint64_t limit);
Result<double> number_member(const json& parent, std::string_view path, std::string_view key);
// A token id: an integer from 0 to 2^31-1.
Result<std::int32_t> token_id(const json& value, std::string_view path);
// The component's "type" string.
Result<std::string> type_of(const json& component, std::string_view path);

}  // namespace accel::text::json_fields
