// The cache-view environment: every framework cache variable a warmup Job
// and a model pod get, all under the one view path (core/layout.h
// kDefaultView), because Triton records absolute paths and vLLM hashes them:
// a cache is reusable only at the path where it was written. One list, used
// by the warmup Job builder (operator/decide/warmup_job.cc) and the admission
// webhook (operator/webhook/mutate.cc); docs/webhook-env.md gives each
// variable's source. Pure.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::core {

// The emptyDir every gated pod has: the view lives in it.
inline constexpr std::string_view kRunDir = "/var/run/kernelcache";

// (name, value) in a fixed order.
const std::vector<std::pair<std::string, std::string>>& CacheViewEnv();

// Whether `name` is one of CacheViewEnv()'s variables (which the operator
// sets itself, so they never count as cache-affecting user environment).
bool IsCacheViewEnv(std::string_view name);

}  // namespace kc::core
