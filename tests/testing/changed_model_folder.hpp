// A fixture for model-folder tests that change one committed family folder (tests/embed/data/families/NAME) and
// read it back: its config.json edited, or its model.safetensors rewritten with a changed tensor list, and the
// refusals checked for the file, the field and what was wrong.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "embed/model_folder.hpp"
#include "embed/model_weights.hpp"
#include "embed/safetensors_writer.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::testing {

inline const std::filesystem::path kFamilyFolders = std::filesystem::path(ACCEL_TEST_DATA) / "families";

class ChangedModelFolder : public ::testing::Test {
 protected:
  explicit ChangedModelFolder(const std::string& scratch) : dir_(scratch) {}

  // `name` copied, its config.json changed by `change`, read back; `bare`: without modules.json (a bare
  // transformers checkpoint, whose head its architectures name).
  Result<embed::ModelFolder> read_changed(const std::string& name, const std::function<void(nlohmann::json&)>& change,
                                          bool bare = false) {
    std::filesystem::copy(kFamilyFolders / name, dir_.path(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    if (bare) std::filesystem::remove(dir_.path() / "modules.json");
    nlohmann::json config = nlohmann::json::parse(std::ifstream(kFamilyFolders / name / "config.json"));
    change(config);
    std::ofstream(dir_.path() / "config.json") << config.dump();
    return embed::ModelFolder::read(dir_.path());
  }

  void expect_refused(const std::string& name, const std::function<void(nlohmann::json&)>& change,
                      const std::string& field, const std::string& what, bool bare = false) {
    const Result<embed::ModelFolder> folder = read_changed(name, change, bare);
    ASSERT_FALSE(folder.ok()) << field << ": the change was accepted (" << what << ")";
    EXPECT_EQ(folder.code(), Code::invalid_argument);
    EXPECT_THAT(folder.status().message(), ::testing::HasSubstr((dir_.path() / "config.json").native()));
    EXPECT_THAT(folder.status().message(), ::testing::HasSubstr("field '" + field + "'"));
    EXPECT_THAT(folder.status().message(), ::testing::HasSubstr(what));
  }

  // `name` copied, its model.safetensors rewritten (zero-filled) with `change` applied to its tensor list, opened.
  Result<embed::ModelWeights> open_changed(const std::string& name,
                                           const std::function<void(std::vector<WrittenTensor>&)>& change) {
    const Result<embed::ModelFolder> folder = read_changed(name, [](nlohmann::json&) {});
    EXPECT_TRUE(folder.ok()) << folder.status().to_string();
    const Result<embed::SafetensorsFile> file =
        embed::SafetensorsFile::open(kFamilyFolders / name / "model.safetensors");
    EXPECT_TRUE(file.ok());
    std::vector<WrittenTensor> tensors;
    for (std::string_view tensor : file->names()) {
      const embed::TensorView view = *file->tensor(tensor);
      tensors.push_back({std::string(tensor), "F32", {view.shape.begin(), view.shape.end()}});
    }
    change(tensors);
    std::ofstream(dir_.path() / "model.safetensors", std::ios::binary) << safetensors_bytes(tensors);
    return embed::ModelWeights::open(*folder);
  }

  void expect_weights_refused(const Result<embed::ModelWeights>& weights, const std::string& what) {
    ASSERT_FALSE(weights.ok()) << what;
    EXPECT_EQ(weights.code(), Code::invalid_argument);
    EXPECT_THAT(weights.status().message(), ::testing::HasSubstr((dir_.path() / "model.safetensors").native()));
    EXPECT_THAT(weights.status().message(), ::testing::HasSubstr(what));
  }

  ScratchDirectory dir_;
};

}  // namespace accel::testing
