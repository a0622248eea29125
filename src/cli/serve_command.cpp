#include "cli/serve_command.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <ctime>
#include <optional>

#include "accel/device/device.hpp"
#include "accel/device/pool.hpp"
#include "accel/embed/model.hpp"
#include "cli/device_choice.hpp"
#include "serve/embedding_server.hpp"
#include "serve/inference_service.hpp"
#include "serve/inference_steps.hpp"

namespace accel::cli {
namespace {

using serve::EmbeddingServer;

// Waits for SIGTERM or SIGINT (blocked in every thread, so only this wait takes them), or for the listener to
// end by itself.
void wait_for_signal(const sigset_t& signals, const EmbeddingServer& server) {
  const timespec poll{.tv_sec = 0, .tv_nsec = 200'000'000};
  while (server.serving()) {
    const int signal = sigtimedwait(&signals, nullptr, &poll);
    if (signal > 0) {
      fmt::print(stderr, "accel serve: signal {}, shutting down\n", signal);
      return;
    }
  }
}

// The devices of `--devices`, with the server's longer spin (see the one-device case below).
Result<std::vector<DeviceSpec>> device_specs(const std::string& list) {
  return parse_device_list(list, DeviceOptions{.mailbox = {.spin = std::chrono::microseconds(1000)}});
}

serve::ModelReload reload_on(const Device& device, const embed::ModelOptions& options, const std::string& where) {
  return [device, options, where]() -> Result<std::shared_ptr<embed::Model>> {
    fmt::print(stderr, "accel serve: {} lost its context; loading {} again\n", where, options.folder.string());
    return embed::Model::load(device, options);
  };
}

// A replica of the model on every device of `pool`, in its order.
Result<serve::ServedModel> load_replicas(const DevicePool& pool, const embed::ModelOptions& options,
                                         serve::ModelServeOptions served) {
  serve::ServedModel model{.device = pool.device(0), .options = std::move(served), .pool = pool};
  for (std::size_t i = 0; i < pool.size(); ++i) {
    Result<std::shared_ptr<embed::Model>> replica = embed::Model::load(pool.device(i), options);
    if (!replica.ok()) return replica.status().with_context(fmt::format("on device '{}'", pool.spec(i)));
    const std::string where = fmt::format("device '{}'", serve::replica_label(pool, i));
    model.replicas.push_back({.model = *replica, .reload = reload_on(pool.device(i), options, where)});
  }
  model.model = model.replicas.front().model;
  model.device = pool.device(0);
  model.reload = model.replicas.front().reload;
  return model;
}

}  // namespace

int run_serve(const ServeCommand& command) {
  // Before any thread starts, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::vector<std::filesystem::path> folders(command.models.begin(), command.models.end());
  if (folders.empty()) folders.push_back(embed::default_model_folder());
  Result<std::vector<serve::ModelServeOptions>> per_model = model_serve_options(folders.size(), command.per_model);
  if (!per_model.ok()) {
    fmt::print(stderr, "accel serve: {}\n", per_model.status().to_string());
    return 1;
  }

  // A bad device list is refused before the server listens.
  std::vector<DeviceSpec> specs;
  if (!command.devices.empty()) {
    Result<std::vector<DeviceSpec>> parsed = device_specs(command.devices);
    if (!parsed.ok()) {
      fmt::print(stderr, "accel serve: {}\n", parsed.status().to_string());
      return 1;
    }
    specs = std::move(*parsed);
  }

  System system;
  EmbeddingServer server(command.server);
  Result<int> port = server.start();
  if (!port.ok()) {
    fmt::print(stderr, "accel serve: {}\n", port.status().to_string());
    return 1;
  }
  fmt::print(stderr, "accel serve: listening on http://{}:{}\n", command.server.host, *port);
  if (!command.server.tracing.otlp_endpoint.empty())
    fmt::print(stderr, "accel serve: sending spans as '{}' to {}\n", command.server.tracing.service_name,
               command.server.tracing.otlp_endpoint);

  std::optional<DevicePool> pool;
  if (!specs.empty()) {
    Result<DevicePool> opened = DevicePool::open(system, specs);
    if (!opened.ok()) {
      fmt::print(stderr, "accel serve: {}\n", opened.status().to_string());
      return 1;
    }
    pool = std::move(*opened);
    for (const PooledDeviceState& device : pool->states())
      fmt::print(stderr, "accel serve: device '{}' is {}\n", device.spec, device.name);
  }

  std::vector<serve::ServedModel> models;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    const std::filesystem::path& folder = folders[i];
    // Without --batch-tokens a model runs (embed::default_batch_tokens) and batches (with_model_options) as many
    // tokens as its longest sequence where that is past the default. Every batch size is warmed before the server
    // is ready, so that none is compiled, captured and timed while requests wait behind it.
    const embed::ModelOptions options{.folder = folder,
                                      .compute = (*per_model)[i].compute,
                                      .batch_tokens = (*per_model)[i].batch_tokens.value_or(0),
                                      .warm_every_batch_size = true};
    Result<std::shared_ptr<embed::Model>> model = std::shared_ptr<embed::Model>();
    std::optional<serve::ServedModel> replicated;
    if (pool) {
      // Each model keeps its own placement counters: a device one model's replica lost is down for it alone.
      Result<serve::ServedModel> loaded =
          load_replicas(i == 0 ? *pool : pool->with_own_counters(), options, (*per_model)[i]);
      if (loaded.ok()) {
        model = loaded->model;
        replicated = std::move(*loaded);
      } else {
        model = loaded.status();
      }
    } else if (models.empty()) {
      // The device's thread spins a millisecond for the next request before it sleeps: on a quiet server the next
      // one comes within that, and waking a sleeping thread was most of the one-connection p99
      // (docs/PERFORMANCE.md, 10).
      auto [opened, device_failed] =
          open_model(system, command.device, options, {.spin = std::chrono::microseconds(1000)});
      if (device_failed) {
        fmt::print(stderr, "accel serve: {}\n", opened.status().to_string());
        return 1;
      }
      model = std::move(opened);
    } else {
      // The others share the first one's device, each through a stream of its own where the device has streams
      // (the CPU device has none): the GPU then runs their batches side by side, instead of one model's small
      // batches waiting behind another's large ones in one queue (docs/PERFORMANCE.md, 36).
      const Result<Device> stream = models.front().device.open_stream();
      model = embed::Model::load(stream.ok() ? *stream : models.front().device, options);
    }
    if (!model.ok()) {
      fmt::print(stderr, "accel serve: loading {}: {}\n", folder.string(), model.status().to_string());
      return 1;
    }
    const embed::ModelInfo& info = (*model)->info();
    const serve::ServeOptions served = with_model_options(command.server, (*per_model)[i], info.max_sequence_length);
    if (Status prompt = serve::check_default_prompt(served, info); !prompt.ok()) {
      fmt::print(stderr, "accel serve: {}\n", prompt.to_string());
      return 1;
    }
    // Every route is served; those the model's head does not fit answer 424 saying why.
    const char* fitting = info.output == embed::Output::dense    ? "/v1/embeddings, /embed"
                          : info.output == embed::Output::sparse ? "/embed_sparse"
                                                                 : "/rerank, /predict";
    fmt::print(stderr, "accel serve: a {} model ({}): {}, /tokenize and /info fit it\n", to_string(info.output),
               info.head, fitting);
    const std::string& name = (*per_model)[i].name.empty() ? info.name : (*per_model)[i].name;
    fmt::print(stderr,
               "accel serve: loaded {} as '{}' ({} dimensions, {} tokens at most, {} tokens a batch) on {}, warmed in "
               "{:.0f} ms\n",
               info.name, name, info.dimensions, info.max_sequence_length, served.batching.batch_tokens, info.device,
               info.load.warm_ms);
    if (replicated) {
      fmt::print(stderr, "accel serve: '{}' has a replica on each of {} devices\n", name, pool->size());
      models.push_back(std::move(*replicated));
      continue;
    }
    // An isolated worker that is replaced takes the model's weights with it: the server loads them again.
    const Device device = (*model)->device();
    models.push_back({std::move(*model), device,
                      [device, options]() -> Result<std::shared_ptr<embed::Model>> {
                        fmt::print(stderr, "accel serve: the device lost its context; loading {} again\n",
                                   options.folder.string());
                        return embed::Model::load(device, options);
                      },
                      (*per_model)[i]});
  }
  std::string names;
  for (const serve::ServedModel& model : models)
    names += (names.empty() ? "" : ", ") + (model.options.name.empty() ? model.model->info().name : model.options.name);
  if (Status attached = server.attach(std::move(models)); !attached.ok()) {
    fmt::print(stderr, "accel serve: {}\n", attached.to_string());
    return 1;
  }
  fmt::print(stderr, "accel serve: ready: {}\n", names);

  wait_for_signal(signals, server);
  server.stop();
  return 0;
}

}  // namespace accel::cli
