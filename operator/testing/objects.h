// The operator's test objects, built in one place: a GPU node as GPU Feature
// Discovery labels it, as Decide's NodeView and as a v1 Node object; a
// pod's projected ServiceAccount token as the miss channel receives it.
// Test-only (kc_operator_testing); never linked into a program.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "operator/decide/types.h"

namespace kc::op::fixtures {

using Labels = std::map<std::string, std::string>;

inline constexpr char kH200[] = "NVIDIA-H200";
inline constexpr char kDriver[] = "580.159.04";

// The labels GFD puts on a node with one kind of GPU: product, compute
// capability <compute_major>.0, CUDA driver, CUDA runtime 13.0, amd64.
Labels GpuLabels(const std::string& product = kH200, const std::string& driver = kDriver,
                 const std::string& compute_major = "9");

// A Ready, schedulable node with 8 allocatable GPUs and `labels`.
NodeView GpuNodeView(const std::string& name, Labels labels = GpuLabels());

// The same node as the API server serves it: apiVersion, kind,
// metadata.name and .labels, status.allocatable["nvidia.com/gpu"] = "8" and
// condition Ready=True.
nlohmann::json GpuNodeJson(const std::string& name, const Labels& labels = GpuLabels());

// The claims of a pod-bound ServiceAccount token for the miss channel's
// audience (and the API server's), expiring at `exp` (seconds since the
// epoch).
nlohmann::json PodTokenClaims(const std::string& ns, const std::string& pod, const std::string& uid,
                              std::int64_t exp);

// A JWT carrying `claims`, its header and signature made up: it passes the
// checks made before a TokenReview, never a TokenReview itself.
std::string PodTokenJwt(const nlohmann::json& claims);

}  // namespace kc::op::fixtures
