// Buffers shared between processes (accel/device/process_sharing.hpp), with a second process
// (process_sharing_peer.cpp): written by one process and read by the other, then freed or its exporter ended, after
// which the other's next use is stale_handle; an isolated device's worker exports; the text form refuses damage.
// Built twice: for the CPU device (CI) and, with ACCEL_SHARING_CUDA, for CUDA (the GPU machine).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "device/sharing/export_table.hpp"
#include "testing/conversing_child.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

#if ACCEL_SHARING_CUDA
constexpr DeviceKind kKind = DeviceKind::cuda;
#else
constexpr DeviceKind kKind = DeviceKind::cpu;
#endif
constexpr std::uint64_t kCount = 1 << 16;

std::string expected_values(float scale) {
  const double sum = scale * (static_cast<double>(kCount) * kCount / 2);  // sum of i + 0.5 over [0, kCount)
  return fmt::format("{},{},{}", 0.5f * scale, (kCount - 0.5f) * scale, sum);
}

class ProcessSharingTest : public ::testing::TestWithParam<Isolation> {
 protected:
  void SetUp() override {
    Result<Device> device = Device::open(system_, {.kind = kKind, .isolation = GetParam()});
    if (!device.ok() && device.status().code() == Code::unavailable) GTEST_SKIP() << device.status().to_string();
    ASSERT_THAT(device, IsOk());
    device_.emplace(*device);
  }

  // A peer in its own process, in process, of this test's kind (or `kind`: cuda:1 for the second GPU).
  static std::unique_ptr<testing::ConversingChild> peer(std::vector<std::string> args,
                                                        std::string kind = std::string(to_string(kKind))) {
    args.insert(args.begin(),
                {testing::sibling_program("process_sharing_peer").string(), std::move(kind), "in_process"});
    return std::make_unique<testing::ConversingChild>(std::move(args));
  }

  Buffer<float> filled() {
    std::vector<float> host(kCount);
    for (std::uint64_t i = 0; i < kCount; ++i) host[i] = static_cast<float>(i) + 0.5f;
    Buffer<float> buffer = *device_->allocate<float>(kCount).wait();
    EXPECT_THAT(device_->upload(std::span<const float>(host), buffer).wait(), IsOk());
    return buffer;
  }

  std::string values_of(const Buffer<float>& buffer) {
    std::vector<float> host(kCount);
    if (Status got = device_->download(buffer, std::span<float>(host)).wait().status(); !got.ok())
      return std::string(to_string(got.code()));
    return fmt::format("{},{},{}", host.front(), host.back(), std::accumulate(host.begin(), host.end(), 0.0));
  }

  // A reader of `kind` imports `exported` (of `buffer`, filled), reads it and doubles it in place, which shows here
  // (the same memory); once `buffer` is freed here, the reader's next read is stale.
  void expect_read_and_written_until_freed(const Buffer<float>& buffer, const ExportedBuffer& exported,
                                           std::string kind) {
    auto reader = peer({"import"}, std::move(kind));
    ASSERT_TRUE(reader->started());
    reader->say(to_text(exported));
    EXPECT_EQ(reader->await("imported"), "ok") << reader->transcript();
    EXPECT_EQ(reader->await("values"), expected_values(1)) << reader->transcript();
    EXPECT_EQ(reader->await("written"), "ok") << reader->transcript();
    EXPECT_EQ(values_of(buffer), expected_values(2));

    ASSERT_THAT(device_->free(buffer).wait(), IsOk());
    reader->say("again");
    EXPECT_EQ(reader->await("again"), "stale_handle") << reader->transcript();
    EXPECT_EQ(reader->finish(), 0);
  }

  System system_;
  std::optional<Device> device_;
};

TEST_P(ProcessSharingTest, AnotherProcessReadsAndWritesTheBufferAndFindsItStaleOnceFreed) {
  Buffer<float> buffer = filled();
  Result<ExportedBuffer> exported = device_->export_buffer(buffer).wait();
  ASSERT_THAT(exported, IsOk());
  EXPECT_EQ(*device_->export_buffer(buffer).wait(), *exported);  // exporting again answers the same
  EXPECT_EQ(values_of(buffer), expected_values(1));              // the move kept the contents
  expect_read_and_written_until_freed(buffer, *exported, std::string(to_string(kKind)));
}

#if ACCEL_SHARING_CUDA
// Across GPUs: the other process imports on cuda:1 what this one exported on cuda:0 (CUDA IPC maps it there with peer
// access), reads it and doubles it in place; this process sees the doubled values; once freed here, the other's next
// read is stale.
TEST_P(ProcessSharingTest, AProcessOnAnotherGpuReadsAndWritesTheBufferAndFindsItStaleOnceFreed) {
  if (Device::count(DeviceKind::cuda) < 2) GTEST_SKIP() << "needs two GPUs";
  Buffer<float> buffer = filled();
  Result<ExportedBuffer> exported = device_->export_buffer(buffer).wait();
  ASSERT_THAT(exported, IsOk());
  expect_read_and_written_until_freed(buffer, *exported, "cuda:1");
}
#endif

TEST_P(ProcessSharingTest, AnImportGoesStaleWhenItsExporterEndsOrFreesIt) {
  for (const bool ends : {false, true}) {
    auto writer = peer({"export", std::to_string(kCount)});
    std::optional<std::string> text = writer->await("exported");
    ASSERT_TRUE(text) << writer->transcript();
    Result<ExportedBuffer> exported = parse_exported_buffer(*text);
    ASSERT_THAT(exported, IsOk()) << *text;
    Result<Buffer<float>> imported = device_->import_buffer<float>(*exported).wait();
    ASSERT_THAT(imported, IsOk());
    EXPECT_EQ(values_of(*imported), expected_values(1));
    std::vector<float> doubled(kCount);
    for (std::uint64_t i = 0; i < kCount; ++i) doubled[i] = 2 * (static_cast<float>(i) + 0.5f);
    ASSERT_THAT(device_->upload(std::span<const float>(doubled), *imported).wait(), IsOk());
    writer->say("read");
    EXPECT_EQ(writer->await("values"), expected_values(2)) << writer->transcript();

    if (ends) {
      EXPECT_EQ(writer->finish(), 0);
    } else {
      writer->say("free");
      EXPECT_EQ(writer->await("freed"), "ok") << writer->transcript();
      // A freed export is refused on import too.
      EXPECT_THAT(device_->import_buffer<float>(*exported).wait(), StatusIs(Code::stale_handle));
    }
    EXPECT_EQ(values_of(*imported), "stale_handle") << (ends ? "exporter ended" : "exporter freed it");
    EXPECT_THAT(device_->free(*imported).wait(), IsOk());  // letting go of a stale import is fine
    if (!ends) {
      EXPECT_EQ(writer->finish(), 0);
    }
  }
}

TEST_P(ProcessSharingTest, AKilledExportersImportsGoStaleAndItsLeftoversAreSweptByTheNextExporter) {
  auto killed = peer({"export", "64"});
  Result<ExportedBuffer> exported = parse_exported_buffer(killed->await("exported").value_or(""));
  ASSERT_THAT(exported, IsOk()) << killed->transcript();
  Result<Buffer<float>> imported = device_->import_buffer<float>(*exported).wait();
  ASSERT_THAT(imported, IsOk());
  const std::filesystem::path table = fmt::format("/dev/shm/accel-exports-{}", killed->pid());
  EXPECT_TRUE(std::filesystem::exists(table));
  killed.reset();  // SIGKILL: nothing of it runs at exit
  std::vector<float> host(64);
  EXPECT_THAT(device_->download(*imported, std::span<float>(host)).wait(), StatusIs(Code::stale_handle));
  // Its table is left behind until an exporter starts: the next one here, or any other on the host (tests running
  // beside this one) that starts first.
  auto next = peer({"export", "64"});
  EXPECT_TRUE(next->await("exported")) << next->transcript();
  EXPECT_FALSE(std::filesystem::exists(table));
  EXPECT_EQ(next->finish(), 0);
}

TEST_P(ProcessSharingTest, AnEarlierProcessWithTheSameIdLeavesNothingInTheWay) {
  auto exporter = peer({"export-after-leftovers", std::to_string(kCount)});
  std::optional<std::string> text = exporter->await("exported");
  ASSERT_TRUE(text && text->starts_with("accel-buffer-v1:")) << exporter->transcript();
  Buffer<float> imported = *device_->import_buffer<float>(*parse_exported_buffer(*text)).wait();
  EXPECT_EQ(values_of(imported), expected_values(1));
  EXPECT_EQ(exporter->finish(), 0);
}

TEST_P(ProcessSharingTest, WhatCannotBeSharedIsRefusedByName) {
  Buffer<float> buffer = filled();
  ExportedBuffer exported = *device_->export_buffer(buffer).wait();
  EXPECT_THAT(device_->import_buffer<double>(exported).wait(), StatusIs(Code::invalid_argument, "f32"));
  ExportedBuffer other_kind = exported;
  other_kind.kind = kKind == DeviceKind::cpu ? DeviceKind::cuda : DeviceKind::cpu;
  EXPECT_THAT(device_->import_buffer<float>(other_kind).wait(), StatusIs(Code::invalid_argument, "device"));
  ExportedBuffer damaged = exported;
  damaged.table[3] = 'X';
  EXPECT_THAT(device_->import_buffer<float>(damaged).wait(), StatusIs(Code::invalid_argument, "table"));
  if (kKind == DeviceKind::cuda && GetParam() == Isolation::in_process) {
    EXPECT_THAT(device_->import_buffer<float>(exported).wait(), StatusIs(Code::invalid_argument, "this process"));
  }
}

INSTANTIATE_TEST_SUITE_P(InProcessAndIsolated, ProcessSharingTest,
                         ::testing::Values(Isolation::in_process, Isolation::worker_process),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// An isolated device: its worker exports, and the supervisor retires the exports of a worker it lost.
class LostWorkerTest : public ProcessSharingTest {};

TEST_P(LostWorkerTest, ALostWorkersExportsGoStale) {
  Buffer<float> buffer = filled();
  Result<ExportedBuffer> exported = device_->export_buffer(buffer).wait();
  ASSERT_THAT(exported, IsOk());
  EXPECT_NE(exported->process, static_cast<std::int32_t>(::getpid()));  // the worker exported it
  auto reader = peer({"import"});
  reader->say(to_text(*exported));
  EXPECT_EQ(reader->await("values"), expected_values(1)) << reader->transcript();

  (void)device_->inject_fault(FaultKind::worker_crash).wait();
  std::string again;
  for (int attempt = 0; attempt < 200 && again != "stale_handle"; ++attempt) {
    reader->say("again");
    again = reader->await("again").value_or("no answer");
    if (again != "stale_handle") std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(again, "stale_handle") << reader->transcript();
  // The supervisor removed what the worker left in shared memory.
  EXPECT_FALSE(std::filesystem::exists(fmt::format("/dev/shm/accel-exports-{}", exported->process)));
  EXPECT_EQ(reader->finish(), 0);
}

INSTANTIATE_TEST_SUITE_P(Isolated, LostWorkerTest, ::testing::Values(Isolation::worker_process),
                         [](const auto& info) { return std::string(to_string(info.param)); });

#if !ACCEL_SHARING_CUDA
TEST(ProcessSharingCpuTest, AnImportInTheSameProcessIsTheSameMemory) {
  System system;
  Device exporter = *Device::open(system);
  Device importer = *Device::open(system);
  Buffer<std::int32_t> buffer = *exporter.allocate<std::int32_t>(8).wait();
  std::vector<std::int32_t> values{1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_THAT(exporter.upload(std::span<const std::int32_t>(values), buffer).wait(), IsOk());
  ExportedBuffer exported = *exporter.export_buffer(buffer).wait();
  Buffer<std::int32_t> imported = *importer.import_buffer<std::int32_t>(exported).wait();
  EXPECT_THAT(importer.export_buffer(imported).wait(), StatusIs(Code::failed_precondition, "imported"));
  std::vector<std::int32_t> seen(8);
  ASSERT_THAT(importer.download(imported, std::span<std::int32_t>(seen)).wait(), IsOk());
  EXPECT_EQ(seen, values);
  // A buffer whose address a library of this process holds cannot move into shared memory.
  Buffer<std::int32_t> lent = *exporter.allocate<std::int32_t>(8).wait();
  ASSERT_THAT(exporter.ask(ShareMemory{.buffer = lent}).wait(), IsOk());
  EXPECT_THAT(exporter.export_buffer(lent).wait(), StatusIs(Code::failed_precondition, "another library"));
  // Freed: the import is stale; a reset of the exporter retires every export alike.
  ASSERT_THAT(exporter.free(buffer).wait(), IsOk());
  EXPECT_THAT(importer.download(imported, std::span<std::int32_t>(seen)).wait(), StatusIs(Code::stale_handle));
  Buffer<std::int32_t> second = *exporter.allocate<std::int32_t>(8).wait();
  ExportedBuffer second_exported = *exporter.export_buffer(second).wait();
  Buffer<std::int32_t> second_imported = *importer.import_buffer<std::int32_t>(second_exported).wait();
  ASSERT_THAT(exporter.reset().wait(), IsOk());
  EXPECT_THAT(importer.download(second_imported, std::span<std::int32_t>(seen)).wait(),
              StatusIs(Code::stale_handle, "freed by the process that exported it"));
}

TEST(ProcessSharingCpuTest, AnExportWaitsForItsImportersBeforeItsEntryIsReused) {
  using device::sharing::ExportTable;
  ExportTable* table = *ExportTable::instance();
  ExportTable::Claim claim = *table->claim();
  ExportedBuffer exported{.kind = DeviceKind::cpu,
                          .dtype = DType::f32,
                          .count = 1,
                          .process = ::getpid(),
                          .slot = claim.slot,
                          .generation = claim.generation};
  std::copy_n(table->name().begin(), table->name().size(), exported.table.begin());
  std::unique_ptr<device::sharing::ImportWatch> watch = *device::sharing::ImportWatch::open(exported);
  EXPECT_THAT(watch->check("it"), IsOk());
  table->retire(claim.slot);
  EXPECT_THAT(watch->check("it"), StatusIs(Code::stale_handle, "it was freed"));
  EXPECT_TRUE(table->still_imported(claim.slot));
  EXPECT_NE(table->claim()->slot, claim.slot);  // not reused while imported
  watch.reset();
  EXPECT_FALSE(table->still_imported(claim.slot));
  EXPECT_THAT(device::sharing::ImportWatch::open(exported), StatusIs(Code::stale_handle));
}

TEST(ProcessSharingCpuTest, TheTextFormRefusesDamage) {
  System system;
  Device device = *Device::open(system);
  Buffer<float> buffer = *device.allocate<float>(4).wait();
  const std::string text = to_text(*device.export_buffer(buffer).wait());
  EXPECT_EQ(*parse_exported_buffer(text), *device.export_buffer(buffer).wait());
  EXPECT_THAT(parse_exported_buffer(""), StatusIs(Code::invalid_argument, "begins"));
  EXPECT_THAT(parse_exported_buffer(text.substr(0, text.size() - 2)), StatusIs(Code::invalid_argument, "hex digits"));
  std::string upper = text;
  upper.back() = 'G';
  EXPECT_THAT(parse_exported_buffer(upper), StatusIs(Code::invalid_argument, "hex"));
  const std::size_t fields = std::string("accel-buffer-v1:").size();
  const auto with_byte = [&](std::size_t offset, const char* hex) {
    std::string damaged = text;
    damaged.replace(fields + 2 * offset, 2, hex);
    return parse_exported_buffer(damaged);
  };
  EXPECT_THAT(with_byte(0, "07"), StatusIs(Code::invalid_argument, "device kind"));
  EXPECT_THAT(with_byte(1, "ff"), StatusIs(Code::invalid_argument, "element type"));
  EXPECT_THAT(with_byte(26 + 5, "41"), StatusIs(Code::invalid_argument, "table"));
  EXPECT_THAT(with_byte(74 + 2, "2f"), StatusIs(Code::invalid_argument, "memory"));
}
#endif

}  // namespace
}  // namespace accel
