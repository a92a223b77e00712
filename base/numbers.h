// Numbers from untrusted text (flags, labels, object fields, files), parsed
// without exceptions and without overflow.
//
//   ParseInt64("42", "--workers", 1, 64)  -> 42
//   ParseInt64("4x", "--workers", 1, 64)  -> InvalidArgument
//       "--workers: \"4x\" is not an integer"
//   ParseInt64("99", "--workers", 1, 64)  -> InvalidArgument
//       "--workers: 99 is out of range 1..64"
//
// Accepts an optional leading '-' and decimal digits only (no '+', no
// spaces, no hex); a value beyond int64 is "out of range", never UB.
// CheckedAdd / CheckedMul return false instead of overflowing.
// Pure.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "base/status.h"

namespace kc {

[[nodiscard]] StatusOr<int64_t> ParseInt64(std::string_view text, std::string_view what,
                                           int64_t min = std::numeric_limits<int64_t>::min(),
                                           int64_t max = std::numeric_limits<int64_t>::max());

// *out = a + b / a * b; false (and *out untouched) on overflow.
[[nodiscard]] inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
[[nodiscard]] inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

}  // namespace kc
