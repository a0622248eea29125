#include "serve/served_models.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace accel::serve {

ModelSlot::ModelSlot(ServedModel served, const ServeOptions& server)
    : name(served.options.name.empty() ? served.model->info().name : served.options.name),
      options(with_model_options(server, served.options, served.model->info().max_sequence_length)),
      device(std::move(served.device)),
      limits{.max_inputs = server.max_inputs,
             .max_sequence_length = served.model->info().max_sequence_length,
             .dimensions = served.model->info().dimensions,
             .vocabulary = served.model->info().vocabulary,
             .normalized = served.model->info().normalized},
      service(served.replicas.empty()
                  ? std::vector<ReplicaModel>{{.model = std::move(served.model), .reload = std::move(served.reload)}}
                  : std::move(served.replicas),
              std::move(served.pool), options.batching, metrics),
      stats([this] { return service.stats(); }, std::chrono::seconds(1)) {}

Result<std::unique_ptr<ServedModels>> ServedModels::make(std::vector<ServedModel> models, const ServeOptions& options) {
  if (models.empty()) return invalid_argument("a server needs a model to serve");
  auto served = std::make_unique<ServedModels>();
  for (ServedModel& model : models) {
    const std::string name = model.options.name.empty() ? model.model->info().name : model.options.name;
    if (std::ranges::find(served->names_, name) != served->names_.end())
      return invalid_argument(fmt::format("two models are named '{}': a request could not choose between them", name));
    served->names_.push_back(name);
    served->slots_.push_back(std::make_unique<ModelSlot>(std::move(model), options));
  }
  return served;
}

ApiResult<ModelSlot*> ServedModels::select(std::string_view name) const {
  if (name.empty() || slots_.size() == 1) return slots_.front().get();
  for (const auto& slot : slots_)
    if (slot->name == name) return slot.get();
  std::string known;
  for (const std::string& each : names_) known += (known.empty() ? "'" : ", '") + each + "'";
  return ApiError{400, fmt::format("'model' is '{}'; this server serves {}", name, known), "model", "model_not_found"};
}

std::string ServedModels::unready_reason() const {
  for (const auto& slot : slots_) {
    const std::string whose = slots_.size() > 1 ? fmt::format(" ({})", slot->name) : "";
    if (slot->service.pooled()) {
      if (!slot->service.recovering()) continue;
      std::string why;
      for (const ReplicaStatus& replica : slot->service.replicas())
        why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", replica.device, replica.reason);
      return fmt::format("no device can serve{}: {}", whose, why);
    }
    if (Status device = slot->device.health(); !device.ok())
      return fmt::format("the device cannot serve{}: {}", whose, device.to_string());
    if (slot->service.recovering()) return fmt::format("the device lost its context and is being replaced{}", whose);
  }
  return "";
}

void ServedModels::stop() {
  for (const auto& slot : slots_) slot->service.stop();
}

ApiResult<std::string> requested_model(std::string_view body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::string();
  const auto model = doc.find("model");
  if (model == doc.end() || model->is_null()) return std::string();
  if (!model->is_string()) return bad_type("model", "a string");
  return model->get<std::string>();
}

}  // namespace accel::serve
