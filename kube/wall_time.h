// Wall-clock timestamps as the Kubernetes API writes them.
//
// - FormatRfc3339(t): "2026-12-02T09:31:35Z" (metav1.Time, seconds).
// - FormatMicroTime(t): "2026-12-02T09:31:35.123456Z" (metav1.MicroTime, as
//   used by Lease acquireTime/renewTime and Event eventTime).
// - ParseApiTime(s): either form, any number of fractional digits, "Z" or a
//   "+hh:mm"/"-hh:mm" offset. InvalidArgument naming the text otherwise.
//
// Pure.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::kube {

using WallTime = std::chrono::system_clock::time_point;

std::string FormatRfc3339(WallTime t);
std::string FormatMicroTime(WallTime t);
StatusOr<WallTime> ParseApiTime(std::string_view s);

}  // namespace kc::kube
