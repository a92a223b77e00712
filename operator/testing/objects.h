// The operator's test objects, built in one place: a GPU node as GPU Feature
// Discovery labels it, as Decide's NodeView and as a v1 Node object.
// Test-only (kc_operator_testing); never linked into a program.
#pragma once

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

}  // namespace kc::op::fixtures
