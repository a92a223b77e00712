// Wall-clock timestamps as the Kubernetes API writes them (RFC 3339, UTC).
//
// - FormatTime(t): "2026-12-02T09:31:35Z" (metav1.Time, whole seconds).
// - FormatMicroTime(t): "2026-12-02T09:31:35.123456Z" (metav1.MicroTime, as
//   Lease acquireTime/renewTime and Event eventTime use).
// - ParseTime(s): either form, any number of fractional digits (kept to the
//   nanosecond), "Z" or a "+hh:mm"/"-hh:mm" offset. InvalidArgument naming
//   the text when malformed, or outside the years kMinYear..kMaxYear (the
//   clock's nanosecond int64 spans 1678..2262; the margin keeps
//   `time + duration` from overflowing for any duration the spec accepts).
//
// Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::api {

using Time = std::chrono::system_clock::time_point;

inline constexpr int kMinYear = 1700;
inline constexpr int kMaxYear = 2200;

std::string FormatTime(Time t);
std::string FormatMicroTime(Time t);
StatusOr<Time> ParseTime(std::string_view s);

// Whole seconds since the Unix epoch, and back (rounded down).
inline Time FromUnixSeconds(int64_t s) { return Time(std::chrono::seconds(s)); }
inline int64_t ToUnixSeconds(Time t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace kc::api
