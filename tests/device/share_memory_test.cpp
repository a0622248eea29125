// ShareMemory on the CPU device: a buffer's address exported, memory another library owns adopted as a buffer (used
// in place, never freed by the device), the stream query, refusals; an isolated device refuses it. The CUDA side runs
// from Python on the GPU machine (python/gpu_tests/test_dlpack_cuda.py).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "accel/device/device.hpp"
#include "device/buffer_table.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

class ShareMemoryTest : public ::testing::Test {
 protected:
  Device open(DeviceOptions options = {}) {
    Result<Device> device = Device::open(system_, options);
    EXPECT_THAT(device, IsOk());
    return *device;
  }
  static std::uint64_t live_buffers(const Device& device) { return device.info().wait()->memory.live_buffers; }
  System system_;
};

template <class T>
std::uint64_t address_of(T* data) {
  return reinterpret_cast<std::uintptr_t>(data);
}

TEST_F(ShareMemoryTest, AnExportAnswersTheMemoryTheBuffersRequestsUse) {
  Device dev = open();
  std::vector<float> host(16);
  std::iota(host.begin(), host.end(), 1.0f);
  Buffer<float> buffer = *dev.allocate<float>(16).wait();
  ASSERT_THAT(dev.upload(std::span<const float>(host), buffer).wait(), IsOk());
  Result<SharedMemory> shared = dev.ask(ShareMemory{.buffer = buffer}).wait();
  ASSERT_THAT(shared, IsOk());
  EXPECT_EQ(shared->buffer, buffer.handle());
  EXPECT_EQ(shared->stream, 0u);  // the CPU has no streams
  auto* memory = reinterpret_cast<float*>(static_cast<std::uintptr_t>(shared->address));
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(std::vector<float>(memory, memory + 16), host);
  memory[3] = -1.0f;  // another library writes; the device reads it
  std::vector<float> back(16);
  ASSERT_THAT(dev.download(buffer, std::span<float>(back)).wait(), IsOk());
  EXPECT_EQ(back[3], -1.0f);
  EXPECT_EQ(dev.ask(ShareMemory{.buffer = buffer}).wait()->address, shared->address);  // the same memory every time
}

TEST_F(ShareMemoryTest, AdoptedMemoryIsUsedInPlaceAndNeverFreedByTheDevice) {
  Device dev = open();
  const std::uint64_t before = live_buffers(dev);
  std::vector<double> owned(8, 0.0);
  Result<SharedMemory> adopted =
      dev.ask(ShareMemory{.address = address_of(owned.data()), .dtype = DType::f64, .count = 8}).wait();
  ASSERT_THAT(adopted, IsOk());
  const BufferHandle handle = adopted->buffer;
  EXPECT_EQ(handle.count, 8u);
  EXPECT_EQ(handle.dtype, DType::f64);
  EXPECT_EQ(live_buffers(dev), before + 1);
  const std::vector<double> values{1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_THAT(
      dev.ask(CopyToDevice{.source = HostSource::of(std::span<const double>(values)), .destination = handle}).wait(),
      IsOk());
  EXPECT_EQ(owned, values);  // the device wrote the owner's memory
  EXPECT_EQ(dev.ask(ShareMemory{.buffer = handle}).wait()->address, address_of(owned.data()));
  ASSERT_THAT(dev.free(handle).wait(), IsOk());  // forgets the memory: the vector frees it (ASan: no double free)
  EXPECT_EQ(live_buffers(dev), before);
  EXPECT_THAT(dev.free(handle).wait(), StatusIs(Code::stale_handle));
  EXPECT_THAT(dev.ask(ShareMemory{.buffer = handle}).wait(), StatusIs(Code::stale_handle));
}

TEST_F(ShareMemoryTest, AResetOrACloseLeavesAdoptedMemoryToItsOwner) {
  std::vector<std::int32_t> owned(4, 7);
  {
    Device dev = open();
    const BufferHandle handle =
        dev.ask(ShareMemory{.address = address_of(owned.data()), .dtype = DType::i32, .count = 4}).wait()->buffer;
    ASSERT_THAT(dev.reset().wait(), IsOk());
    EXPECT_THAT(dev.ask(ShareMemory{.buffer = handle}).wait(), StatusIs(Code::stale_handle));
    (void)dev.ask(ShareMemory{.address = address_of(owned.data()), .dtype = DType::i32, .count = 4}).wait();
    ASSERT_THAT(dev.close().wait(), IsOk());
  }
  EXPECT_EQ(owned, std::vector<std::int32_t>(4, 7));  // still the vector's, freed once when it goes
}

TEST_F(ShareMemoryTest, AQueryAnswersNoBufferAndBadAdoptionsAreRefused) {
  Device dev = open();
  Result<SharedMemory> query = dev.ask(ShareMemory{}).wait();
  ASSERT_THAT(query, IsOk());
  EXPECT_TRUE(query->buffer.is_null());
  EXPECT_EQ(query->address, 0u);
  float one = 1.0f;
  EXPECT_THAT(dev.ask(ShareMemory{.address = address_of(&one), .count = 0}).wait(), StatusIs(Code::invalid_argument));
  EXPECT_THAT(dev.ask(ShareMemory{.address = address_of(&one), .count = ~0ull}).wait(),
              StatusIs(Code::invalid_argument));  // its byte count overflows
}

TEST_F(ShareMemoryTest, AnIsolatedDeviceRefusesToShareItsWorkersMemory) {
  Device dev = open(DeviceOptions{.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  Buffer<float> buffer = *dev.allocate<float>(4).wait();
  EXPECT_THAT(dev.ask(ShareMemory{.buffer = buffer}).wait(), StatusIs(Code::not_supported));
  float one = 1.0f;
  EXPECT_THAT(dev.ask(ShareMemory{.address = address_of(&one), .count = 1}).wait(), StatusIs(Code::not_supported));
  ASSERT_THAT(dev.close().wait(), IsOk());
}

TEST(BufferTableExternalTest, ExternalMemoryIsNeitherReturnedForFreeingNorReplaced) {
  device::BufferTable table(1, 0, "test:0");
  float owned[4] = {};
  float ours[4] = {};
  const BufferHandle external = table.insert_external(owned, DType::f32, 4);
  const BufferHandle allocated = table.insert(ours, DType::f32, 4);
  EXPECT_TRUE(table.is_external(external));
  EXPECT_TRUE(table.is_shared(external));
  EXPECT_FALSE(table.is_external(allocated));
  EXPECT_FALSE(table.is_shared(allocated));
  int owned_seen = 0;
  table.for_each_owned([&](const BufferView& view) { owned_seen += view.data == ours ? 1 : 100; });
  EXPECT_EQ(owned_seen, 1);
  EXPECT_THAT(table.replace_memory(external, ours), StatusIs(Code::failed_precondition));
  EXPECT_EQ(table.resolve(external, "x")->data, static_cast<void*>(owned));  // resolves to the owner's memory
  table.mark_shared(allocated);  // exported: its memory stays put too, but it is still ours to free
  EXPECT_THAT(table.replace_memory(allocated, owned), StatusIs(Code::failed_precondition));
  EXPECT_FALSE(table.is_external(allocated));
  EXPECT_EQ(table.remove(external)->data, nullptr);
  EXPECT_EQ(table.remove(allocated)->data, static_cast<void*>(ours));
  EXPECT_FALSE(table.is_external(external));
  // A slot used again for an allocation is the device's own memory.
  const BufferHandle reused = table.insert(ours, DType::f32, 4);
  EXPECT_FALSE(table.is_external(reused));
  EXPECT_FALSE(table.is_shared(reused));
  EXPECT_EQ(table.remove(reused)->data, static_cast<void*>(ours));
}

}  // namespace
}  // namespace accel
