// Kubernetes resource quantities (resource.Quantity) as byte counts.
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::api {

// Kubernetes quantity ("20Gi", "1.5G", "500M", "1024") to bytes, rounded
// up, in exact integer arithmetic. InvalidArgument when malformed or above
// int64 (8Ei); never throws, whatever the length.
StatusOr<int64_t> ParseQuantityBytes(std::string_view q);
// Bytes as a short binary-unit string: "0", "512", "1.2Ki", "20Gi".
std::string FormatBytes(int64_t bytes);

}  // namespace kc::api
