// Copies between two in-process CUDA devices (accel/device/peer.hpp): cuda:0 and cuda:1 where the machine has two
// GPUs, else cuda:0 opened twice (two devices, two contexts' buffer tables and pools on one GPU). Skipped without a
// GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/device/peer.hpp"
#include "testing/buffer_values.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/device_pair.hpp"

namespace accel {
namespace {

using testing::contents;
using testing::filled;
using testing::IsOk;
using testing::StatusIs;

class CudaPeerCopyTest : public ::testing::Test, protected testing::DevicePair {
 protected:
  void SetUp() override {
    const int gpus = Device::count(DeviceKind::cuda);
    if (gpus == 0) GTEST_SKIP() << "no CUDA GPU here";
    open_pair({.kind = DeviceKind::cuda, .ordinal = 0}, {.kind = DeviceKind::cuda, .ordinal = gpus > 1 ? 1 : 0});
  }
};

TEST_F(CudaPeerCopyTest, CopiesRangesOfSeveralSizesAndTypesBothWays) {
  for (std::size_t n : {1ul, 1000ul, (3ul << 20) + 7}) {
    expect_range_copied(a(), b(), n, 16);
    expect_range_copied(b(), a(), n, 0);

    const std::vector<std::int8_t> bytes = random_values<std::int8_t>(n);
    Buffer<std::int8_t> bytes_on_b = filled(b(), bytes);
    Buffer<std::int8_t> bytes_on_a = *a().allocate<std::int8_t>(n).wait();
    ASSERT_THAT(copy_between_devices(b(), a(), {.source = bytes_on_b, .destination = bytes_on_a, .count = n}).wait(),
                IsOk());
    EXPECT_EQ(contents(a(), bytes_on_a), bytes);
  }
}

// The copy takes its place in both devices' orders: it reads the upload sent just before it, the destination's
// requests sent after it follow it, and an overwrite of the source sent after it waits for it on the GPU. Nothing here
// waits for GPU work on the host between the requests.
TEST_F(CudaPeerCopyTest, OrdersTheCopyOnBothDevicesWithoutWaitingOnTheHost) {
  const std::size_t n = 64ul << 20;  // 256 MiB: the copy is still running when the next requests are enqueued
  const std::vector<float> first = random_values<float>(n);
  const std::vector<float> second = random_values<float>(n);
  const std::vector<float> stale = random_values<float>(n);
  Buffer<float> on_a = *a().allocate<float>(n).wait();
  Buffer<float> on_b = *b().allocate<float>(n).wait();
  Future<Done> uploaded = a().upload(std::span<const float>(first), on_a);  // read by the copy
  Future<Done> earlier = b().upload(std::span<const float>(stale), on_b);   // written before the copy, in b's order
  Future<Done> copied = copy_between_devices(a(), b(), {.source = on_a, .destination = on_b, .count = n});
  std::vector<float> seen(n);
  Future<Done> read = b().download(on_b, std::span<float>(seen));  // after the copy, in b's order
  Future<Done> overwritten = a().upload(std::span<const float>(second), on_a);
  ASSERT_THAT(uploaded.wait(), IsOk());
  ASSERT_THAT(earlier.wait(), IsOk());
  ASSERT_THAT(copied.wait(), IsOk());
  ASSERT_THAT(read.wait(), IsOk());
  ASSERT_THAT(overwritten.wait(), IsOk());
  EXPECT_TRUE(seen == first) << "the destination read something other than the source before its overwrite";
  EXPECT_TRUE(contents(a(), on_a) == second);
}

// Copies both ways from two threads at once, each behind an upload and before a download of its own: every copy reads
// the upload sent just before it and is what the download after it sees, and no device waits for the other forever
// (the parts of every copy are in one order in both devices' mailboxes).
TEST_F(CudaPeerCopyTest, CopiesFromTwoThreadsBothWaysKeepEachThreadsOrder) {
  constexpr int kCopies = 200;
  constexpr std::size_t n = 4099;
  auto copy_many = [&](const Device& from, const Device& to, std::vector<std::vector<float>>& sent,
                       std::vector<std::vector<float>>& seen) {
    Buffer<float> source = *from.allocate<float>(n).wait();
    Buffer<float> destination = *to.allocate<float>(n).wait();
    std::vector<Future<Done>> steps;
    for (int i = 0; i < kCopies; ++i) {
      steps.push_back(from.upload(std::span<const float>(sent[i]), source));
      steps.push_back(copy_between_devices(from, to, {.source = source, .destination = destination, .count = n}));
      steps.push_back(to.download(destination, std::span<float>(seen[i])));
    }
    for (Future<Done>& step : steps) ASSERT_THAT(step.wait(), IsOk());
  };
  std::vector<std::vector<float>> forward_sent;
  std::vector<std::vector<float>> backward_sent;
  for (int i = 0; i < kCopies; ++i) {
    forward_sent.push_back(random_values<float>(n));
    backward_sent.push_back(random_values<float>(n));
  }
  std::vector<std::vector<float>> forward_seen(kCopies, std::vector<float>(n));
  std::vector<std::vector<float>> backward_seen(kCopies, std::vector<float>(n));
  std::thread backward([&] { copy_many(b(), a(), backward_sent, backward_seen); });
  copy_many(a(), b(), forward_sent, forward_seen);
  backward.join();
  for (int i = 0; i < kCopies; ++i) {
    EXPECT_TRUE(forward_seen[i] == forward_sent[i]) << "copy " << i << " from a to b";
    EXPECT_TRUE(backward_seen[i] == backward_sent[i]) << "copy " << i << " from b to a";
  }
}

// A copy to a device closed meanwhile is refused, and the source device, which joined the copy's meeting, goes on.
TEST_F(CudaPeerCopyTest, ACopyToAClosedDeviceLetsTheSourceGoOn) {
  Result<Device> other = Device::open(system_, {.kind = DeviceKind::cuda, .ordinal = 0});
  ASSERT_THAT(other, IsOk());
  Buffer<float> on_a = filled(a(), random_values<float>(64));
  Buffer<float> on_other = *other->allocate<float>(64).wait();
  ASSERT_THAT(other->close().wait(), IsOk());
  EXPECT_THAT(copy_between_devices(a(), *other, {.source = on_a, .destination = on_other, .count = 64}).wait(),
              StatusIs(Code::failed_precondition));
  EXPECT_THAT(a().record_fence().wait(), IsOk());
}

TEST_F(CudaPeerCopyTest, RefusesStaleAndForeignBuffersNamingThem) {
  Buffer<float> on_a = filled(a(), random_values<float>(32));
  const std::vector<float> target = random_values<float>(32);
  Buffer<float> on_b = filled(b(), target);
  EXPECT_THAT(
      copy_between_devices(a(), b(), {.source = on_a, .source_offset = 1, .destination = on_b, .count = 32}).wait(),
      StatusIs(Code::invalid_argument));
  Buffer<std::int32_t> integers = *b().allocate<std::int32_t>(32).wait();
  EXPECT_THAT(copy_between_devices(a(), b(), {.source = on_a, .destination = integers, .count = 32}).wait(),
              StatusIs(Code::invalid_argument, "element types differ"));
  const BufferHandle freed = on_a;
  ASSERT_THAT(a().free(freed).wait(), IsOk());
  EXPECT_THAT(copy_between_devices(a(), b(), {.source = freed, .destination = on_b, .count = 32}).wait(),
              StatusIs(Code::stale_handle));
  // A closed source device is no longer found: its buffers are nobody's.
  Buffer<float> last = filled(a(), random_values<float>(32));
  const BufferHandle orphan = last;
  ASSERT_THAT(a().close().wait(), IsOk());
  EXPECT_THAT(b().ask(CopyOnDevice{.source = orphan, .destination = on_b, .count = 32}).wait(),
              StatusIs(Code::invalid_argument, "not a CUDA device open in this process"));
  EXPECT_EQ(contents(b(), on_b), target);
}

TEST_F(CudaPeerCopyTest, StagesCopiesWithAnIsolatedDeviceThroughTheHost) {
  Result<Device> isolated =
      Device::open(system_, {.kind = DeviceKind::cuda, .ordinal = 0, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const std::vector<float> source = random_values<float>(100000);
  Buffer<float> on_a = filled(a(), source);
  Buffer<float> remote = *isolated->allocate<float>(source.size()).wait();
  ASSERT_THAT(
      copy_between_devices(a(), *isolated, {.source = on_a, .destination = remote, .count = source.size()}).wait(),
      IsOk());
  Buffer<float> back = *b().allocate<float>(source.size()).wait();
  ASSERT_THAT(
      copy_between_devices(*isolated, b(), {.source = remote, .destination = back, .count = source.size()}).wait(),
      IsOk());
  EXPECT_EQ(contents(b(), back), source);
}

// Device::open runs on the caller's thread, whose current CUDA device may be another library's (PyTorch keeps its own
// there): opening cuda:1 leaves it on cuda:0, and so does closing it.
TEST(CudaDeviceOpenOnGpus, LeavesTheCallersCurrentDeviceAsItWas) {
  if (Device::count(DeviceKind::cuda) < 2) GTEST_SKIP() << "needs two GPUs";
  std::thread([] {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // cuda:0's context is this thread's current one
    System system;
    Result<Device> opened = Device::open(system, {.kind = DeviceKind::cuda, .ordinal = 1});
    ASSERT_THAT(opened, IsOk());
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 0) << "Device::open moved the caller's current device";
    ASSERT_THAT(opened->close().wait(), IsOk());
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 0) << "closing the device moved the caller's current device";
  }).join();
}

TEST(CudaPeerLinksOnGpus, DescribeEveryPair) {
  const int gpus = Device::count(DeviceKind::cuda);
  if (gpus < 2) GTEST_SKIP() << "needs two GPUs";
  for (const PeerLink& link : cuda_peer_links()) {
    int can = 0;
    ASSERT_EQ(cudaDeviceCanAccessPeer(&can, link.from, link.to), cudaSuccess);
    EXPECT_EQ(link.peer_access, can != 0);
    RecordProperty("link", std::to_string(link.from) + "->" + std::to_string(link.to) + " peer=" +
                               std::to_string(link.peer_access) + " atomics=" + std::to_string(link.native_atomics) +
                               " rank=" + std::to_string(link.performance_rank) + " " +
                               std::string(to_string(link.link)) + " nvlinks=" + std::to_string(link.nvlinks));
  }
}

std::string command_output(const char* command) {
  std::string out;
  if (FILE* pipe = popen(command, "r")) {
    std::array<char, 4096> chunk;
    while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) out.append(chunk.data(), n);
    pclose(pipe);
  }
  return out;
}

using PciAddress = std::array<unsigned, 4>;  // domain, bus, device, function

PciAddress pci_address(const std::string& bus_id) {
  PciAddress a{};
  std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &a[0], &a[1], &a[2], &a[3]);
  return a;
}

// `nvidia-smi topo -m`'s cell for each ordered pair of GPUs, keyed by their PCI addresses (nvidia-smi numbers GPUs
// as NVML does, not as CUDA may); empty where nvidia-smi is not there.
std::map<std::pair<PciAddress, PciAddress>, std::string> nvidia_smi_topology() {
  std::map<int, PciAddress> address_of;
  std::istringstream ids(command_output("nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader 2>/dev/null"));
  for (std::string line; std::getline(ids, line);) {
    const std::size_t comma = line.find(',');
    if (comma != std::string::npos) address_of[std::stoi(line.substr(0, comma))] = pci_address(line.substr(comma + 2));
  }
  std::map<std::pair<PciAddress, PciAddress>, std::string> cells;
  std::string text = command_output("nvidia-smi topo -m 2>/dev/null");
  // Its header is underlined by terminal escapes ("\x1b[4m" ... "\x1b[0m") even into a pipe.
  for (std::size_t escape; (escape = text.find('\x1b')) != std::string::npos;)
    text.erase(escape, text.find('m', escape) - escape + 1);
  std::istringstream matrix(text);
  std::size_t columns = 0;
  for (std::string line; std::getline(matrix, line);) {
    std::istringstream words(line);
    std::vector<std::string> tokens{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    if (columns == 0) {  // the header: the GPU columns come first
      while (columns < tokens.size() && tokens[columns] == "GPU" + std::to_string(columns)) ++columns;
      continue;
    }
    if (tokens.size() <= columns || tokens[0].rfind("GPU", 0) != 0) continue;
    const int row = std::stoi(tokens[0].substr(3));
    for (std::size_t column = 0; column < columns; ++column) {
      if (static_cast<int>(column) == row) continue;
      cells[{address_of[row], address_of[static_cast<int>(column)]}] = tokens[column + 1];
    }
  }
  return cells;
}

// What the link's kind and NVLink count read as in `nvidia-smi topo -m`.
std::string as_nvidia_smi_names(const PeerLink& link) {
  switch (link.link) {
    case LinkKind::nvlink: return "NV" + std::to_string(link.nvlinks);
    case LinkKind::pcie_switch: return "PIX or PXB";
    case LinkKind::pcie_host_bridge: return "PHB";
    case LinkKind::numa_node: return "NODE";
    case LinkKind::system: return "SYS";
    default: return std::string(to_string(link.link));
  }
}

// NVML's view of every pair, as accel reports it, is what nvidia-smi (NVML's own tool) prints for it.
TEST(CudaPeerLinksOnGpus, NameTheLinkNvidiaSmiNames) {
  if (Device::count(DeviceKind::cuda) < 2) GTEST_SKIP() << "needs two GPUs";
  const auto cells = nvidia_smi_topology();
  if (cells.empty()) GTEST_SKIP() << "no nvidia-smi here";
  for (const PeerLink& link : cuda_peer_links()) {
    std::array<char, 32> from{}, to{};
    ASSERT_EQ(cudaDeviceGetPCIBusId(from.data(), from.size(), link.from), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetPCIBusId(to.data(), to.size(), link.to), cudaSuccess);
    const auto cell = cells.find({pci_address(from.data()), pci_address(to.data())});
    ASSERT_NE(cell, cells.end()) << from.data() << " -> " << to.data();
    std::string want = cell->second;
    if (want == "PIX" || want == "PXB") want = "PIX or PXB";
    EXPECT_EQ(as_nvidia_smi_names(link), want) << "cuda:" << link.from << " -> cuda:" << link.to;
  }
}

}  // namespace
}  // namespace accel
