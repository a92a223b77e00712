#include "base/duration.h"

#include <algorithm>
#include <cstdint>

#include "base/numbers.h"

namespace kc {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The value as quoted in messages: at most 64 bytes.
std::string Shown(std::string_view text) {
  return std::string(text.substr(0, 64)) + (text.size() > 64 ? "..." : "");
}

// Decimal digits (leading zeros allowed) to a number no larger than
// `limit`; false when larger (more than 12 significant digits always is).
bool ReadNumber(std::string_view digits, int64_t limit, int64_t* out) {
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  if (digits.size() > 12) return false;
  int64_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');  // <= 12 digits: no overflow
  if (v > limit) return false;
  *out = v;
  return true;
}

}  // namespace

std::string DurationExamples(const DurationSyntax& syntax) {
  if (!syntax.bare_seconds && !syntax.days) {
    return "whole hours, minutes and seconds, e.g. 24h, 90m, 1h30m";
  }
  std::string e = "e.g. ";
  if (syntax.bare_seconds) e += "90, ";
  e += "45s, 5m, 1h30m";
  if (syntax.days) e += ", 2d";
  return e;
}

std::string FormatDuration(std::chrono::seconds d, bool days) {
  int64_t s = std::max<int64_t>(0, d.count());
  if (s == 0) return "0s";
  std::string out;
  auto unit = [&](int64_t size, char name) {
    if (s < size) return;
    out += std::to_string(s / size) + name;
    s %= size;
  };
  if (days) unit(86400, 'd');
  unit(3600, 'h');
  unit(60, 'm');
  unit(1, 's');
  return out;
}

StatusOr<std::chrono::seconds> ParseDuration(std::string_view text, const DurationSyntax& syntax,
                                             DurationFault* fault) {
  const int64_t max = syntax.max.count();
  auto malformed = [&] {
    if (fault != nullptr) *fault = DurationFault::kMalformed;
    return InvalidArgumentError("malformed duration \"" + Shown(text) + "\": want " +
                                DurationExamples(syntax));
  };
  auto too_long = [&](const std::string& what) {
    if (fault != nullptr) *fault = DurationFault::kTooLong;
    return InvalidArgumentError(what + " is too long: at most " +
                                FormatDuration(syntax.max, syntax.days));
  };
  if (text.empty()) return malformed();
  int64_t total = 0;
  if (syntax.bare_seconds && IsDigit(text.back())) {
    for (char c : text) {
      if (!IsDigit(c)) return malformed();
    }
    if (!ReadNumber(text, max, &total)) return too_long(Shown(text) + " seconds");
    return std::chrono::seconds(total);
  }
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i == start || i == text.size()) return malformed();
    int64_t unit = 0;
    switch (text[i]) {
      case 'd':
        if (!syntax.days) return malformed();
        unit = 86400;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'm':
        unit = 60;
        break;
      case 's':
        unit = 1;
        break;
      default:
        return malformed();
    }
    int64_t n = 0;
    int64_t part = 0;
    if (!ReadNumber(text.substr(start, i - start), max, &n) || !CheckedMul(n, unit, &part) ||
        !CheckedAdd(total, part, &total) || total > max) {
      return too_long("duration \"" + Shown(text) + "\"");
    }
    ++i;
  }
  return std::chrono::seconds(total);
}

}  // namespace kc
