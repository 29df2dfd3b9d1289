#include "tools/npy.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(NpyTest, HeaderIsNumpyFormat10PaddedTo64Bytes) {
  const std::string header = NpyHeader("<u2", {3, 4});
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(header[6], 1);
  EXPECT_EQ(header[7], 0);
  const size_t dict_len = static_cast<uint8_t>(header[8]) | static_cast<uint8_t>(header[9]) << 8;
  EXPECT_EQ(dict_len + 10, header.size());
  EXPECT_NE(header.find("{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }"),
            std::string::npos);
  EXPECT_EQ(header.back(), '\n');
}

TEST(NpyTest, OneDimensionalShapeHasATrailingComma) {
  EXPECT_NE(NpyHeader("<i4", {5}).find("'shape': (5,), }"), std::string::npos);
}

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(NpyTest, WriteNpyWritesHeaderThenData) {
  const std::vector<int32_t> values = {1, 2, 3, 4, 5, 6};
  const std::string path = TempPath("values.npy");
  ASSERT_TRUE(WriteNpy(path, "<i4", {2, 3}, values.data(), values.size() * 4).ok());
  std::ifstream in(path, std::ios::binary);
  const std::string contents((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const std::string header = NpyHeader("<i4", {2, 3});
  ASSERT_EQ(contents.size(), header.size() + 24);
  EXPECT_EQ(contents.substr(0, header.size()), header);
  EXPECT_EQ(contents.substr(header.size()),
            std::string(reinterpret_cast<const char*>(values.data()), 24));
}

TEST(NpyTest, BoolArraysAreOneBytePerElement) {
  EXPECT_EQ(NpyItemSize("|b1").value(), 1);
  const std::vector<uint8_t> mask = {1, 0, 0, 1, 1, 0};
  const std::string path = TempPath("mask.npy");
  ASSERT_TRUE(WriteNpy(path, "|b1", {2, 3}, mask.data(), mask.size()).ok());
  std::ifstream in(path, std::ios::binary);
  const std::string contents((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const std::string header = NpyHeader("|b1", {2, 3});
  EXPECT_NE(header.find("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }"),
            std::string::npos);
  ASSERT_EQ(contents.size(), header.size() + 6);
  EXPECT_EQ(contents.substr(header.size()), std::string("\1\0\0\1\1\0", 6));
  EXPECT_THAT(std::string(WriteNpy(path, "|b1", {2, 3}, mask.data(), 5).message()),
              HasSubstr("shape (2, 3) of |b1 is 6 bytes but 5 bytes were given"));
}

// Regression: the dump's meta.json and .npy writes were checked only before
// the buffered data reached the file, so a full disk left a truncated or
// empty file behind and the tool exited 0.
TEST(NpyTest, WriteNpyOntoAFullDeviceFailsNamingTheFile) {
  const std::vector<float> values(16, 1.0f);
  const absl::Status status = WriteNpy("/dev/full", "<f4", {16}, values.data(), 64);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("writing \"/dev/full\" failed: No space left on device"));
}

// Regression: a buffer that was not the shape's size was written as it came,
// giving an .npy numpy reads as garbage or refuses.
TEST(NpyTest, WriteNpyRefusesABufferThatIsNotTheShape) {
  const std::vector<float> values(6, 1.0f);
  const std::string path = TempPath("bad.npy");
  absl::Status status = WriteNpy(path, "<f4", {2, 4}, values.data(), 24);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("shape (2, 4) of <f4 is 32 bytes but 24 bytes were given"));
  status = WriteNpy(path, "<f4", {-1, 4}, values.data(), 24);
  EXPECT_THAT(std::string(status.message()), HasSubstr("shape[0] = -1 is negative"));
  status = WriteNpy(path, "<f4", {int64_t{1} << 62, 8}, values.data(), 24);
  EXPECT_THAT(std::string(status.message()), HasSubstr("overflows int64 bytes"));
  status = WriteNpy(path, "<c8", {6}, values.data(), 24);
  EXPECT_THAT(std::string(status.message()), HasSubstr("npy descr \"<c8\" is not one of"));
}

}  // namespace
}  // namespace paged_attention
