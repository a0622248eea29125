// The buffer table's layout token (src/device/buffer_table.hpp), which lets a CUDA device launch a kept recording
// without resolving each of its handles again: it must change whenever a handle could resolve differently.
#include <gtest/gtest.h>

#include <array>

#include "device/buffer_table.hpp"

namespace accel::device {
namespace {

class BufferTableTest : public ::testing::Test {
 protected:
  std::array<float, 64> memory_{};
  std::array<float, 64> elsewhere_{};
  BufferTable table_{0, 1, "cpu"};
};

TEST_F(BufferTableTest, TheLayoutChangesWhenABufferIsRemovedOrMovedAndOnlyThen) {
  const BufferHandle a = table_.insert(memory_.data(), DType::f32, 16);
  const BufferHandle b = table_.insert(memory_.data() + 16, DType::f32, 16);
  std::uint64_t layout = table_.layout();

  const BufferHandle c = table_.insert(memory_.data() + 32, DType::f32, 16);  // a new buffer moves none
  table_.written(a);
  table_.mark_shared(c);
  EXPECT_EQ(table_.layout(), layout);

  ASSERT_TRUE(table_.remove(b).ok());
  EXPECT_NE(table_.layout(), layout);
  layout = table_.layout();

  // b's slot taken again by a buffer at the same address: b's handle is stale, and the layout said so when b went.
  const BufferHandle again = table_.insert(memory_.data() + 16, DType::f32, 16);
  EXPECT_EQ(again.slot, b.slot);
  EXPECT_FALSE(table_.resolve(b, "b").ok());
  EXPECT_EQ(table_.layout(), layout);

  ASSERT_TRUE(table_.replace_memory(a, elsewhere_.data()).ok());
  EXPECT_NE(table_.layout(), layout);
  layout = table_.layout();

  ASSERT_TRUE(table_.hand_over(a, memory_.data()).ok());
  EXPECT_NE(table_.layout(), layout);
  layout = table_.layout();

  // Refused moves change nothing.
  EXPECT_FALSE(table_.replace_memory(c, elsewhere_.data()).ok());
  EXPECT_FALSE(table_.remove(b).ok());
  EXPECT_EQ(table_.layout(), layout);
}

TEST_F(BufferTableTest, NoTwoTablesShareALayoutNotEvenOfOneDeviceAndEpoch) {
  const BufferTable same_epoch(0, 1, "cpu");
  EXPECT_NE(same_epoch.layout(), table_.layout());
  const std::uint64_t before = table_.layout();
  table_ = BufferTable(0, 1, "cpu");  // as a context's reset replaces its table
  EXPECT_NE(table_.layout(), before);
  EXPECT_NE(table_.layout(), same_epoch.layout());
}

TEST_F(BufferTableTest, OnlyImportedBuffersAreImported) {
  const BufferHandle owned = table_.insert(memory_.data(), DType::f32, 16);
  const BufferHandle external = table_.insert_external(memory_.data() + 16, DType::f32, 16);
  EXPECT_FALSE(table_.is_imported(owned));
  EXPECT_FALSE(table_.is_imported(external));
  ASSERT_TRUE(table_.remove(owned).ok());
  EXPECT_FALSE(table_.is_imported(owned));  // stale
}

}  // namespace
}  // namespace accel::device
