// The embedding model (accel::embed::Model) for python/accel/embed.py, which shapes it like SentenceTransformer.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "accel/embed/model.hpp"
#include "python/futures.hpp"

namespace accel::python {

using namespace nb::literals;

namespace {

struct PyModel {
  PyDevice device;
  std::shared_ptr<embed::Model> model;
};

embed::Truncation truncation_named(const std::string& name) {
  if (name == "right") return embed::Truncation::right;
  if (name == "left") return embed::Truncation::left;
  if (name == "refuse") return embed::Truncation::refuse;
  raise_status(invalid_argument("truncation '" + name + "' is not one of 'right', 'left', 'refuse'"));
}

// Rows as a float32 NumPy array of (count, dimensions), and the tokens each input ran with.
nb::object rows_to_numpy(const embed::Embeddings& rows) {
  nb::module_ numpy = nb::module_::import_("numpy");
  nb::object values = numpy.attr("empty")(nb::make_tuple(rows.count(), rows.dimensions), "dtype"_a = "float32");
  auto array = nb::cast<nb::ndarray<float, nb::c_contig, nb::device::cpu>>(values);
  if (!rows.values.empty()) std::memcpy(array.data(), rows.values.data(), rows.values.size() * sizeof(float));
  nb::object tokens = numpy.attr("array")(nb::cast(rows.tokens), "dtype"_a = "uint32");
  return nb::make_tuple(values, tokens);
}

}  // namespace

void bind_embeddings(nb::module_& module) {
  nb::class_<PyModel>(module, "_EmbedModel")
      .def_static(
          "load",
          [](const PyDevice& device, const std::string& folder, std::uint32_t batch_tokens) {
            std::optional<Result<std::shared_ptr<embed::Model>>> loaded;
            {
              nb::gil_scoped_release released;
              loaded.emplace(embed::Model::load(device.device, {.folder = folder, .batch_tokens = batch_tokens}));
            }
            return PyModel{.device = device, .model = unwrap(std::move(*loaded))};
          },
          "device"_a, "folder"_a, "batch_tokens"_a = 0)
      .def(
          "embed",
          [](PyModel& self, std::vector<std::string> texts, std::optional<std::string> prompt,
             std::optional<std::string> prompt_name, const std::string& truncation, std::uint32_t dimensions) {
            self.device.check_open("the model");
            embed::EmbedOptions options{.truncation = truncation_named(truncation),
                                        .prompt = std::move(prompt),
                                        .prompt_name = std::move(prompt_name),
                                        .dimensions = dimensions};
            return make_future(send_released([&] { return self.model->embed(std::move(texts), std::move(options)); }),
                               &rows_to_numpy);
          },
          "texts"_a, "prompt"_a = nb::none(), "prompt_name"_a = nb::none(), "truncation"_a = "right",
          "dimensions"_a = 0, "A Future of (rows as float32 (count, dimensions), tokens per input as uint32).")
      .def_prop_ro("device", [](const PyModel& self) { return self.device; })
      .def_prop_ro("info", [](const PyModel& self) {
        const embed::ModelInfo& info = self.model->info();
        nb::dict out;
        out["name"] = info.name;
        out["family"] = info.family;
        out["model_type"] = info.model_type;
        out["output"] = std::string(to_string(info.output));
        out["head"] = info.head;
        out["dimensions"] = info.dimensions;
        out["max_sequence_length"] = info.max_sequence_length;
        out["normalized"] = info.normalized;
        out["compute"] = std::string(to_string(info.compute));
        out["device"] = info.device;
        nb::dict prompts;
        for (const auto& [name, text] : info.prompts) prompts[nb::str(name.c_str())] = text;
        out["prompts"] = prompts;
        out["default_prompt_name"] = info.default_prompt_name;
        return out;
      });

  module.def(
      "default_model_folder", []() { return embed::default_model_folder().string(); },
      "$ACCEL_MODEL_DIR, else the all-MiniLM-L6-v2 folder this build knows of.");
}

}  // namespace accel::python
