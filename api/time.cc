#include "api/time.h"

#include <cstdio>
#include <ctime>

namespace kc::api {
namespace {

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::string Format(Time t, bool micros) {
  using std::chrono::duration_cast;
  const auto us = duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  int64_t secs = us / 1000000;
  int64_t frac = us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  const auto tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  if (micros) {
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(frac));
  } else {
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string FormatTime(Time t) { return Format(t, false); }
std::string FormatMicroTime(Time t) { return Format(t, true); }

StatusOr<Time> ParseTime(std::string_view s) {
  auto bad = [&] {
    return InvalidArgumentError("malformed time \"" + std::string(s) +
                                "\": want RFC 3339, e.g. 2026-12-02T09:33:17Z");
  };
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0;
  if (s.size() < 20 || !Digits(s, 0, 4, &year) || s[4] != '-' || !Digits(s, 5, 2, &mon) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &hour) || s[13] != ':' || !Digits(s, 14, 2, &min) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return bad();
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000000;
    const size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (scale > 0) nanos += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad();
  }
  int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om)) {
      return bad();
    }
    offset_s = (s[pos] == '+' ? 1 : -1) * (int64_t{oh} * 3600 + int64_t{om} * 60);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != s.size()) return bad();
  // The clock counts nanoseconds in an int64 (years 1678 to 2262): a time
  // outside kMinYear..kMaxYear would overflow it, or later arithmetic on it.
  if (year < kMinYear || year > kMaxYear) {
    return InvalidArgumentError("time \"" + std::string(s) + "\" is out of range: want a year " +
                                std::to_string(kMinYear) + " to " + std::to_string(kMaxYear));
  }
  const int64_t days = DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  const int64_t secs = days * 86400 + int64_t{hour} * 3600 + int64_t{min} * 60 + sec - offset_s;
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::seconds(secs) +
                                                         std::chrono::nanoseconds(nanos)));
}

}  // namespace kc::api
