// The warmup request plan: the HTTP requests `initwarm drive` sends to a
// server warmup's own server once it is ready (operator -> warmup pod, as
// the JSON array in env KC_WARMUP_REQUESTS).
//
// The operator expands spec.warmup.server.requests into this plan
// (core/server_warmup.h, PlanWarmupCalls): one call per prompt length and
// repetition, bodies already rendered. The driver sends them in order and
// needs no knowledge of the spec. Shapes learned in production can later be
// appended to the same plan.
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::core {

// The environment variable of the warmup pod's driver that carries the plan.
inline constexpr std::string_view kWarmupRequestsEnv = "KC_WARMUP_REQUESTS";
// Bounds a plan must keep (the codec refuses more): the number of calls,
// the bytes of one body, of one header value, of a path, of a label.
inline constexpr size_t kMaxWarmupCalls = 1024;
inline constexpr size_t kMaxWarmupBodyBytes = 1 << 20;
inline constexpr size_t kMaxWarmupHeaderBytes = 8192;
inline constexpr size_t kMaxWarmupPathBytes = 2048;
inline constexpr size_t kMaxWarmupLabelBytes = 256;

struct WarmupCall {
  std::string method;                          // GET, POST, PUT (upper case)
  std::string path;                            // "/v1/completions", starts with '/'
  std::map<std::string, std::string> headers;  // e.g. {"Content-Type": "application/json"}
  std::string body;                            // sent as is; "" = none
  std::string label;                           // for logs: "completions prompt=512 #2"
  friend bool operator==(const WarmupCall&, const WarmupCall&) = default;
};

// [{"method","path","headers"?,"body"?,"label"?}, ...]
std::string WarmupCallsToJson(const std::vector<WarmupCall>& calls);
// InvalidArgument naming the entry and field ("KC_WARMUP_REQUESTS[2].path:
// must start with '/'") for anything that is not a valid plan: not an array,
// a method other than GET/POST/PUT/PATCH/DELETE, a path without a leading
// '/' or with CR/LF or spaces, header names that are not tokens (or name
// Host, Content-Length or Transfer-Encoding, which the driver sets, or one
// header twice in other case), header values or a label with CR/LF/NUL,
// over the bounds above. Keys other than the five are ignored. Never throws.
StatusOr<std::vector<WarmupCall>> ParseWarmupCalls(std::string_view json);

}  // namespace kc::core
