// Element type conversion (kernels/float16/cast.h). Each dtype is an "element" struct that loads
// its value into one of four exact intermediate types (float, double, int64_t, uint64_t) and stores
// from any of them with a single rounding; CastLoop<From, To> composes the two. FindCastFn picks
// the instantiation once (at Prepare).
#include "kernels/float16/cast.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype_visit.h"
#include "kernels/float16/float16.h"
#include "kernels/float16/float8.h"

namespace simplecpp::kernels {
namespace {

// float/double -> integer: truncate toward zero, saturate, NaN -> 0.
template <typename T>
T SaturatingTrunc(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  // max + 1 is a power of two, exact in double.
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (v >= hi) return std::numeric_limits<T>::max();
  if (v <= lo) return std::numeric_limits<T>::min();
  return static_cast<T>(v);
}

// Integer magnitude -> bfloat16 with one rounding (a double or float detour could round twice).
uint16_t IntToBFloat16(bool negative, uint64_t mag) {
  const uint16_t sign = negative ? 0x8000 : 0;
  if (mag == 0) return 0;
  int p = 63;
  while (((mag >> p) & 1) == 0) --p;
  const uint32_t code = RoundMagnitudeToFormat(mag, p, p, 7, 127);
  return static_cast<uint16_t>(sign | (code >= 0x7F80u ? 0x7F80u : code));
}

template <typename V>
bool IsNegative(V v) {
  if constexpr (std::is_unsigned_v<V>) {
    return false;
  } else {
    return v < 0;
  }
}

template <typename V>
uint64_t Magnitude(V v) {
  if constexpr (std::is_unsigned_v<V>) {
    return v;
  } else {
    return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  }
}

template <typename V>
constexpr bool kIsFloat = std::is_floating_point_v<V>;

// ---- native element types ----

template <typename T>
struct Native {
  static constexpr int kPacked = 0;
  static auto Load(const void* p, int64_t i) {
    if constexpr (std::is_same_v<T, bool>) {
      // Read the byte: a bool object holding anything but 0/1 would be undefined behaviour.
      return static_cast<int64_t>(static_cast<const uint8_t*>(p)[i] != 0 ? 1 : 0);
    } else {
      return LoadValue(static_cast<const T*>(p)[i]);
    }
  }
  static auto LoadValue(T v) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      return v;
    } else if constexpr (std::is_unsigned_v<T>) {
      return static_cast<uint64_t>(v);
    } else {
      return static_cast<int64_t>(v);
    }
  }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions&) {
    T* out = static_cast<T*>(p);
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = v != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      out[i] = static_cast<T>(v);
    } else if constexpr (kIsFloat<V>) {
      out[i] = SaturatingTrunc<T>(static_cast<double>(v));
    } else {
      out[i] = static_cast<T>(v);  // integer -> integer wraps (two's complement)
    }
  }
};

struct Half {
  static constexpr int kPacked = 0;
  static float Load(const void* p, int64_t i) {
    return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions&) {
    uint16_t* out = static_cast<uint16_t*>(p);
    if constexpr (std::is_same_v<V, float>) {
      out[i] = FloatToHalfBits(v);
    } else {
      // Integers: exact in double up to 2^53, far beyond float16's range (Inf either way).
      out[i] = DoubleToHalfBits(static_cast<double>(v));
    }
  }
};

struct BFloat16 {
  static constexpr int kPacked = 0;
  static float Load(const void* p, int64_t i) {
    return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions&) {
    uint16_t* out = static_cast<uint16_t*>(p);
    if constexpr (std::is_same_v<V, float>) {
      out[i] = FloatToBFloat16Bits(v);
    } else if constexpr (std::is_same_v<V, double>) {
      out[i] = DoubleToBFloat16Bits(v);
    } else {
      out[i] = IntToBFloat16(IsNegative(v), Magnitude(v));
    }
  }
};

template <Float8Format F>
struct Float8 {
  static constexpr int kPacked = 0;
  static float Load(const void* p, int64_t i) {
    return Float8ToFloat(static_cast<const uint8_t*>(p)[i], F);
  }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions& o) {
    uint8_t* out = static_cast<uint8_t*>(p);
    if constexpr (std::is_same_v<V, float>) {
      out[i] = FloatToFloat8(v, F, o.saturate);
    } else {
      out[i] = DoubleToFloat8(static_cast<double>(v), F, o.saturate);
    }
  }
};

struct E8M0 {
  static constexpr int kPacked = 0;
  static float Load(const void* p, int64_t i) {
    return Float8E8M0ToFloat(static_cast<const uint8_t*>(p)[i]);
  }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions& o) {
    // Integers go through double: exact below 2^53; above, a value can only round to a
    // neighbouring power of two that double also rounds to.
    static_cast<uint8_t*>(p)[i] =
        DoubleToFloat8E8M0(static_cast<double>(v), o.saturate, o.e8m0_rounding);
  }
};

// Packed sub-byte elements: kBits per element, element i at bits (i % per_byte) * kBits of byte
// i / per_byte (low bits first).
template <int kBits>
inline uint32_t LoadBits(const void* p, int64_t i) {
  constexpr int per_byte = 8 / kBits;
  const uint8_t b = static_cast<const uint8_t*>(p)[i / per_byte];
  return (b >> ((i % per_byte) * kBits)) & ((1u << kBits) - 1);
}
template <int kBits>
inline void StoreBits(void* p, int64_t i, uint32_t v) {
  constexpr int per_byte = 8 / kBits;
  constexpr uint32_t mask = (1u << kBits) - 1;
  uint8_t& b = static_cast<uint8_t*>(p)[i / per_byte];
  const int shift = static_cast<int>(i % per_byte) * kBits;
  b = static_cast<uint8_t>((b & ~(mask << shift)) | ((v & mask) << shift));
}

template <int kBits, bool kSigned>
struct PackedInt {
  static constexpr int kPacked = kBits;
  static int64_t Load(const void* p, int64_t i) {
    const uint32_t u = LoadBits<kBits>(p, i);
    if (kSigned && (u >> (kBits - 1))) return static_cast<int64_t>(u) - (int64_t{1} << kBits);
    return static_cast<int64_t>(u);
  }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions&) {
    uint64_t bits;
    if constexpr (kIsFloat<V>) {
      bits = static_cast<uint64_t>(SaturatingTrunc<int64_t>(static_cast<double>(v)));
    } else {
      bits = static_cast<uint64_t>(v);
    }
    StoreBits<kBits>(p, i, static_cast<uint32_t>(bits));  // keeps the low bits: wrap-around
  }
};

struct Float4 {
  static constexpr int kPacked = 4;
  static float Load(const void* p, int64_t i) { return Float4E2M1ToFloat(LoadBits<4>(p, i)); }
  template <typename V>
  static void Store(void* p, int64_t i, V v, const CastOptions&) {
    StoreBits<4>(p, i, DoubleToFloat4E2M1(static_cast<double>(v)));
  }
};

template <typename From, typename To>
void CastLoop(const void* in, void* out, int64_t n, const CastOptions& o) {
  if constexpr (To::kPacked > 0) {
    // Stores update bit fields in place: start from zero bytes so the padding bits of the last
    // byte are defined.
    std::memset(out, 0, (static_cast<size_t>(n) * To::kPacked + 7) / 8);
  }
  for (int64_t i = 0; i < n; ++i) To::Store(out, i, From::Load(in, i), o);
}

template <typename From, typename To, void (*kConvert)(const From*, To*, size_t)>
void BulkCast(const void* in, void* out, int64_t n, const CastOptions&) {
  if (n > 0) kConvert(static_cast<const From*>(in), static_cast<To*>(out), static_cast<size_t>(n));
}

template <int kBits>
void CopyElements(const void* in, void* out, int64_t n, const CastOptions&) {
  const size_t bytes = (static_cast<size_t>(n) * kBits + 7) / 8;
  if (bytes) std::memcpy(out, in, bytes);
}

// Calls fn(Elem{}) for the element struct of dtype t; returns false when t is not castable.
// The numeric dtypes are Native<their C++ type>; the rest have element structs of their own.
template <typename Fn>
bool VisitElem(DType t, Fn&& fn) {
  if (VisitNumericType(t, [&](auto tag) { fn(Native<decltype(tag)>{}); })) return true;
  switch (t) {
    case DType::kFloat16: fn(Half{}); return true;
    case DType::kBFloat16: fn(BFloat16{}); return true;
    case DType::kFloat8E4M3FN: fn(Float8<Float8Format::kE4M3FN>{}); return true;
    case DType::kFloat8E4M3FNUZ: fn(Float8<Float8Format::kE4M3FNUZ>{}); return true;
    case DType::kFloat8E5M2: fn(Float8<Float8Format::kE5M2>{}); return true;
    case DType::kFloat8E5M2FNUZ: fn(Float8<Float8Format::kE5M2FNUZ>{}); return true;
    case DType::kFloat8E8M0: fn(E8M0{}); return true;
    case DType::kFloat4E2M1: fn(Float4{}); return true;
    case DType::kInt4: fn(PackedInt<4, true>{}); return true;
    case DType::kUInt4: fn(PackedInt<4, false>{}); return true;
    case DType::kInt2: fn(PackedInt<2, true>{}); return true;
    case DType::kUInt2: fn(PackedInt<2, false>{}); return true;
    default: return false;
  }
}

// ---- strings ----

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsIntegerLiteral(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// Parses one string into `out` element i of To; false when it is not a number.
template <typename To>
bool ParseOne(const std::string& raw, void* out, int64_t i, const CastOptions& o, bool float32_target,
              bool integer_target) {
  const std::string s = Trim(raw);
  const std::string l = Lower(s);
  if (l == "nan" || l == "+nan" || l == "-nan") {
    To::Store(out, i, std::numeric_limits<double>::quiet_NaN(), o);
    return true;
  }
  if (l == "inf" || l == "+inf" || l == "infinity" || l == "+infinity") {
    To::Store(out, i, std::numeric_limits<double>::infinity(), o);
    return true;
  }
  if (l == "-inf" || l == "-infinity") {
    To::Store(out, i, -std::numeric_limits<double>::infinity(), o);
    return true;
  }
  if (s.empty()) return false;
  if (l == "true" || l == "false") {
    To::Store(out, i, static_cast<int64_t>(l == "true" ? 1 : 0), o);
    return true;
  }
  char* end = nullptr;
  if (integer_target && IsIntegerLiteral(s)) {
    errno = 0;
    if (s[0] == '-') {
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (errno == ERANGE) {
        To::Store(out, i, -std::numeric_limits<double>::infinity(), o);  // saturates
      } else {
        To::Store(out, i, static_cast<int64_t>(v), o);
      }
    } else {
      const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
      if (errno == ERANGE) {
        To::Store(out, i, std::numeric_limits<double>::infinity(), o);
      } else {
        To::Store(out, i, static_cast<uint64_t>(v), o);
      }
    }
    return true;
  }
  if (float32_target) {
    const float v = std::strtof(s.c_str(), &end);  // one rounding, straight to float32
    if (end != s.c_str() + s.size()) return false;
    To::Store(out, i, v, o);
    return true;
  }
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  To::Store(out, i, v, o);
  return true;
}

template <typename V>
std::string FormatValue(V v) {
  if constexpr (std::is_same_v<V, float>) {
    return FormatFloatShortest(v);
  } else if constexpr (std::is_same_v<V, double>) {
    return FormatDoubleShortest(v);
  } else {
    return std::to_string(v);
  }
}

template <typename T>
std::string FormatShortest(T v, int max_digits) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char buf[64];
  for (int digits = 1; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(v));
    T back;
    if constexpr (std::is_same_v<T, float>) {
      back = std::strtof(buf, nullptr);
    } else {
      back = std::strtod(buf, nullptr);
    }
    if (back == v) break;
  }
  return buf;
}

}  // namespace

std::string FormatFloatShortest(float f) { return FormatShortest(f, 9); }
std::string FormatDoubleShortest(double d) { return FormatShortest(d, 17); }

bool IsCastableDType(DType t) {
  return VisitElem(t, [](auto) {});
}

CastFn FindCastFn(DType from, DType to) {
  if (!IsCastableDType(from) || !IsCastableDType(to)) return nullptr;
  if (from == to) {
    switch (DTypeBits(from)) {
      case 2: return &CopyElements<2>;
      case 4: return &CopyElements<4>;
      case 8: return &CopyElements<8>;
      case 16: return &CopyElements<16>;
      case 32: return &CopyElements<32>;
      case 64: return &CopyElements<64>;
      default: return nullptr;
    }
  }
  // float32 <-> float16 / bfloat16: the SIMD bulk conversions, which give the scalar
  // conversions' bits (kernels/float16/float16.cc); a Cast around an op kept in float32 is a
  // whole tensor.
  if (from == DType::kFloat32 && to == DType::kFloat16) {
    return &BulkCast<float, uint16_t, FloatToHalf>;
  }
  if (from == DType::kFloat16 && to == DType::kFloat32) {
    return &BulkCast<uint16_t, float, HalfToFloat>;
  }
  if (from == DType::kFloat32 && to == DType::kBFloat16) {
    return &BulkCast<float, uint16_t, FloatToBFloat16>;
  }
  if (from == DType::kBFloat16 && to == DType::kFloat32) {
    return &BulkCast<uint16_t, float, BFloat16ToFloat>;
  }
  CastFn fn = nullptr;
  VisitElem(from, [&](auto f) {
    using From = decltype(f);
    VisitElem(to, [&](auto t) {
      using To = decltype(t);
      fn = &CastLoop<From, To>;
    });
  });
  return fn;
}

void CastToStrings(DType from, const void* in, std::string* out, int64_t n) {
  VisitElem(from, [&](auto f) {
    using From = decltype(f);
    for (int64_t i = 0; i < n; ++i) out[i] = FormatValue(From::Load(in, i));
  });
}

int64_t CastFromStrings(const std::string* in, DType to, void* out, int64_t n,
                        const CastOptions& options) {
  int64_t bad = -1;
  const bool f32 = to == DType::kFloat32;
  const bool integer = IsIntegerDType(to) || to == DType::kInt4 || to == DType::kUInt4 ||
                       to == DType::kInt2 || to == DType::kUInt2 || to == DType::kBool;
  VisitElem(to, [&](auto t) {
    using To = decltype(t);
    for (int64_t i = 0; i < n; ++i) {
      if (!ParseOne<To>(in[i], out, i, options, f32, integer)) {
        bad = i;
        return;
      }
    }
  });
  return bad;
}

}  // namespace simplecpp::kernels
