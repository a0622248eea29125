// embed::ModelFolder::read, then embed::ModelWeights::open: a model folder's JSON files and its safetensors
// weights. The folder starts as a copy of the committed tiny sentence-transformers model bert_mean_dense_norm
// (Transformer, Pooling, Dense, Normalize, prompts); the input replaces one of its files.
//
// Input: one byte choosing the file ('0' + its index in kFiles, modulo their number), then its contents.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

#include "embed/model_folder.hpp"
#include "embed/model_weights.hpp"
#include "temporary_directory.hpp"

namespace {

constexpr std::array<std::string_view, 9> kFiles = {"modules.json",
                                                    "config.json",
                                                    "1_Pooling/config.json",
                                                    "2_Dense/config.json",
                                                    "config_sentence_transformers.json",
                                                    "tokenizer_config.json",
                                                    "sentence_bert_config.json",
                                                    "model.safetensors",
                                                    "2_Dense/model.safetensors"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel;
  static fuzzing::TemporaryDirectory folder("accel-fuzz-model-folder");
  static const bool copied = [] {
    std::filesystem::copy(ACCEL_FUZZ_MODEL_FOLDER, folder.path(), std::filesystem::copy_options::recursive);
    return true;
  }();
  (void)copied;
  if (size < 1) return 0;
  const std::filesystem::path file = folder.path() / kFiles[static_cast<std::uint8_t>(data[0] - '0') % kFiles.size()];
  fuzzing::write_file(file, std::span<const std::byte>(reinterpret_cast<const std::byte*>(data) + 1, size - 1));
  if (accel::Result<embed::ModelFolder> model = embed::ModelFolder::read(folder.path()); model.ok())
    (void)embed::ModelWeights::open(*model);
  // The next input finds the folder as it was. The copy is retried when a signal interrupts it (libFuzzer's timers
  // do: a CI run died of an uncaught "Interrupted system call" here).
  std::error_code error;
  do {
    std::filesystem::copy_file(std::filesystem::path(ACCEL_FUZZ_MODEL_FOLDER) / file.lexically_relative(folder.path()),
                               file, std::filesystem::copy_options::overwrite_existing, error);
  } while (error == std::errc::interrupted);
  if (error) throw std::filesystem::filesystem_error("restoring the model folder", file, error);
  return 0;
}
