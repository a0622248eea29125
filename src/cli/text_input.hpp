// The texts a command reads: one per line of a file (or - for stdin), or JSONL objects with a "text" string; the
// format is `auto` (JSONL when the file ends in .jsonl or its first line starts with '{'), `lines` or `jsonl`.
// A trailing '\r' is dropped from each line. Shared by `accel embed` and `accel tokenize`.
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace accel::cli {

// Exit codes of the commands that read texts: 0 done; 3 the model folder (or tokenizer file) is missing or refused;
// 4 the input or output cannot be opened or read; 5 an input line is not valid UTF-8 or not a JSONL object with a
// "text" string (the message names the line); 6 (accel cache) a bad entry or a refused cache directory; 1 anything
// else (the device, a failed run). Bad arguments exit with CLI11's codes, 100 and above, after the usage.
enum ExitCode : int { kDone = 0, kFailed = 1, kBadModel = 3, kBadFile = 4, kBadLine = 5, kBadCache = 6 };

struct InputFailure {
  int code;
  std::string message;
};

// Every text of the input, in order; the first bad line ends the read with its number.
std::variant<std::vector<std::string>, InputFailure> read_texts(const std::string& input,
                                                                const std::string& input_format);

}  // namespace accel::cli
