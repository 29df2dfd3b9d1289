#include "tools/npy.h"

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

}  // namespace
}  // namespace paged_attention
