// Element types of Q/K/V/output, and host-side conversions for the 16-bit
// formats so host code (reference, tests, planner tools) needs no CUDA headers.
// Storage for 16-bit types on the host is uint16_t bit patterns, the same bytes
// the GPU reads as __nv_bfloat16 / __half.
#ifndef ATTENTION_BASE_DTYPE_H_
#define ATTENTION_BASE_DTYPE_H_

#include <cstdint>
#include <cstring>

namespace paged_attention {

enum class DType : int32_t { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

constexpr int DTypeSize(DType dtype) { return dtype == DType::kFloat32 ? 4 : 2; }

constexpr const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "unknown";
}

inline uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float FloatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// float -> bfloat16, round to nearest even; NaN stays NaN.
inline uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline float BFloat16ToFloat(uint16_t value) { return FloatFromBits(uint32_t{value} << 16); }

// float -> IEEE half, round to nearest even, overflow to inf; NaN stays NaN.
inline uint16_t FloatToFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (abs < 0x38800000u) {                                               // subnormal or 0
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);           // < 2^-25: 0
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t remainder = abs & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

inline float Float16ToFloat(uint16_t value) {
  const uint32_t sign = uint32_t{value & 0x8000u} << 16;
  const uint32_t exponent = (value >> 10) & 0x1fu;
  const uint32_t mantissa = value & 0x3ffu;
  if (exponent == 0x1f) return FloatFromBits(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // 2^-24
    return sign ? -magnitude : magnitude;
  }
  return FloatFromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Rounds `value` through `dtype` and back: what storing it in that type keeps.
inline float RoundTrip(DType dtype, float value) {
  switch (dtype) {
    case DType::kFloat32:
      return value;
    case DType::kFloat16:
      return Float16ToFloat(FloatToFloat16(value));
    case DType::kBFloat16:
      return BFloat16ToFloat(FloatToBFloat16(value));
  }
  return value;
}

// The element codec every host-side user shares. 16-bit types are stored as
// their bit patterns; EncodeElement16 rounds to nearest even (fp16 overflows
// to inf), DecodeElement reads element `index` of a `dtype` array.
inline uint16_t EncodeElement16(DType dtype, float value) {
  return dtype == DType::kFloat16 ? FloatToFloat16(value) : FloatToBFloat16(value);
}

inline float DecodeElement(DType dtype, const void* data, int64_t index) {
  if (dtype == DType::kFloat32) {
    float value;
    std::memcpy(&value, static_cast<const char*>(data) + index * 4, 4);
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, static_cast<const char*>(data) + index * 2, 2);
  return dtype == DType::kFloat16 ? Float16ToFloat(bits) : BFloat16ToFloat(bits);
}

}  // namespace paged_attention

#endif  // ATTENTION_BASE_DTYPE_H_
