#include "api/quantity.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "base/numbers.h"

namespace kc::api {

StatusOr<int64_t> ParseQuantityBytes(std::string_view q) {
  auto bad = [&] {
    return InvalidArgumentError("malformed quantity \"" + std::string(q.substr(0, 64)) +
                                (q.size() > 64 ? "..." : "") +
                                "\": want a number with an optional suffix Ki Mi Gi Ti Pi Ei "
                                "or k M G T P E, e.g. 20Gi");
  };
  auto too_large = [&] {
    return InvalidArgumentError("quantity \"" + std::string(q.substr(0, 64)) +
                                (q.size() > 64 ? "..." : "") +
                                "\" is too large: at most 8Ei (9223372036854775807 bytes)");
  };
  size_t i = 0;
  while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i;
  if (i == 0) return bad();
  const std::string_view whole = q.substr(0, i);
  std::string_view fraction;
  if (i < q.size() && q[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i;
    if (i == start) return bad();
    fraction = q.substr(start, i - start);
  }
  const std::string_view suffix = q.substr(i);
  static const std::pair<std::string_view, int64_t> kSuffixes[] = {
      {"", 1},
      {"Ki", int64_t{1} << 10},
      {"Mi", int64_t{1} << 20},
      {"Gi", int64_t{1} << 30},
      {"Ti", int64_t{1} << 40},
      {"Pi", int64_t{1} << 50},
      {"Ei", int64_t{1} << 60},
      {"k", 1000},
      {"M", 1000000},
      {"G", 1000000000},
      {"T", 1000000000000},
      {"P", 1000000000000000},
      {"E", 1000000000000000000},
  };
  const auto* unit = std::find_if(std::begin(kSuffixes), std::end(kSuffixes),
                                  [&](const auto& p) { return p.first == suffix; });
  if (unit == std::end(kSuffixes)) return bad();
  const int64_t mult = unit->second;
  // Exact integer arithmetic: whole * mult + ceil(0.fraction * mult).
  int64_t bytes = 0;
  for (char c : whole) {
    if (!CheckedMul(bytes, 10, &bytes) || !CheckedAdd(bytes, c - '0', &bytes)) return too_large();
  }
  if (!CheckedMul(bytes, mult, &bytes)) return too_large();
  // The fraction's first 18 digits are exact in int64; any later non-zero
  // digit only rounds up (ceil), which the remainder test below covers.
  const std::string_view head = fraction.substr(0, 18);
  const bool tail_nonzero =
      fraction.size() > 18 && fraction.substr(18).find_first_not_of('0') != std::string_view::npos;
  __int128 num = 0, den = 1;
  for (char c : head) {
    num = num * 10 + (c - '0');
    den *= 10;
  }
  const __int128 scaled = num * mult;
  int64_t frac = static_cast<int64_t>(scaled / den);
  if (scaled % den != 0 || tail_nonzero) ++frac;
  if (!CheckedAdd(bytes, frac, &bytes)) return too_large();
  return bytes;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes);
  static const char* kUnits[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024.0 && unit < 5) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  const double rounded = std::round(v * 10.0) / 10.0;
  if (rounded == std::floor(rounded)) {
    std::snprintf(buf, sizeof(buf), "%.0f%s", rounded, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f%s", rounded, kUnits[unit]);
  }
  return buf;
}

}  // namespace kc::api
