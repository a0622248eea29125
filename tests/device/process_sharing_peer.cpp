// The other process of process_sharing_test: exports or imports a buffer of f32 and reports each step as a
// "key=value" line on stdout, waiting for the test's next line on stdin between steps (conversing_child.hpp).
//   process_sharing_peer cpu|cuda in_process|worker export COUNT   exported=TEXT; "read": values=; "free": freed=
//   process_sharing_peer cpu|cuda in_process|worker import         TEXT: imported=, values=, written=; "again": again=
//   ... export-after-leftovers COUNT   export, after leaving objects as a killed process with its id would have
// values= is "first,last,sum". Exits 0 at the end of its stdin, 77 when the device does not open.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "accel/device/device.hpp"

namespace {

using namespace accel;

std::string outcome(const Status& status) { return status.ok() ? "ok" : std::string(to_string(status.code())); }

void say(const std::string& key, const std::string& value) {
  fmt::print("{}={}\n", key, value);
  std::fflush(stdout);
}

std::string values_of(const Device& device, const Buffer<float>& buffer) {
  std::vector<float> host(buffer.size());
  if (Status got = device.download(buffer, std::span<float>(host)).wait().status(); !got.ok()) return outcome(got);
  return fmt::format("{},{},{}", host.front(), host.back(), std::accumulate(host.begin(), host.end(), 0.0));
}

std::string next_line() {
  std::string line;
  std::getline(std::cin, line);
  return line;
}

int exporter(const Device& device, std::uint64_t count) {
  std::vector<float> host(count);
  for (std::uint64_t i = 0; i < count; ++i) host[i] = static_cast<float>(i) + 0.5f;
  Buffer<float> buffer = *device.allocate<float>(count).wait();
  if (!device.upload(std::span<const float>(host), buffer).wait().ok()) return 2;
  Result<ExportedBuffer> exported = device.export_buffer(buffer).wait();
  say("exported", exported.ok() ? to_text(*exported) : outcome(exported.status()));
  while (std::cin) {
    const std::string line = next_line();
    if (line == "read") say("values", values_of(device, buffer));
    if (line == "free") say("freed", outcome(device.free(buffer).wait().status()));
  }
  return 0;
}

int importer(const Device& device) {
  Result<ExportedBuffer> exported = parse_exported_buffer(next_line());
  Result<Buffer<float>> imported =
      exported.ok() ? device.import_buffer<float>(*exported).wait() : Result<Buffer<float>>(exported.status());
  say("imported", outcome(imported.status()));
  if (imported.ok()) {
    say("values", values_of(device, *imported));
    std::vector<float> doubled(imported->size());
    (void)device.download(*imported, std::span<float>(doubled)).wait();
    for (float& value : doubled) value *= 2;
    say("written", outcome(device.upload(std::span<const float>(doubled), *imported).wait().status()));
  }
  while (std::cin) {
    if (next_line() == "again" && imported.ok()) say("again", values_of(device, *imported));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::string kind = argv[1];  // cpu, cuda, or cuda:N for the GPU of ordinal N
  const std::string isolation = argv[2];
  const std::string mode = argv[3];
  System system;
  Result<Device> device =
      Device::open(system, {.kind = kind.starts_with("cuda") ? DeviceKind::cuda : DeviceKind::cpu,
                            .ordinal = kind.starts_with("cuda:") ? std::stoi(kind.substr(5)) : 0,
                            .isolation = isolation == "worker" ? Isolation::worker_process : Isolation::in_process});
  if (!device.ok()) {
    say("open", device.status().to_string());
    return 77;
  }
  if (mode == "export" && argc > 4) return exporter(*device, std::stoull(argv[4]));
  if (mode == "export-after-leftovers" && argc > 4) {  // as a killed process that had this id would have left them
    for (const std::string& name :
         {fmt::format("/accel-exports-{}", ::getpid()), fmt::format("/accel-buffer-{}-1", ::getpid())}) {
      const int fd = ::shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
      if (fd < 0 || ::ftruncate(fd, 100) != 0) return 3;
      ::close(fd);
    }
    return exporter(*device, std::stoull(argv[4]));
  }
  if (mode == "import") return importer(*device);
  return 2;
}
