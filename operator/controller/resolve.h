// Resolve: the answer to "which cache does this node's pod use, and in what
// state is it?", served at GET /v1/resolve?namespace=&kernelcache=&node=
// (operator/serving/http_server.h) and read by initwarm's resolve client
// (initwarm/net/resolve_client.h: that header is the wire contract).
//
//   200 {"fingerprint","state","directory":"v1/<fp>","manifestDigest",
//        "message","node":{"gpuProduct","computeCapability","driver",
//        "cudaDriver","arch"}}
//   400 {"error"} a query parameter is missing
//   404 {"error"} unknown KernelCache or unknown node (the informer caches
//                 may be behind: the gate retries)
//
// state is the fingerprint's state in the KernelCache's status (Pending,
// Warming, Ready, Degraded, Failed, Stale), Pending when the operator has
// not recorded it yet, and Unknown when the answer is final:
//   "final": true, "reason": InvalidSpec (the spec is invalid) |
//   NodeNotSelected (the node is outside spec.nodeSelector) |
//   NodeHasNoFingerprint (the node lacks the GPU Feature Discovery labels;
//   then "fingerprint" is "" and "node" is absent)
// A final answer means waiting cannot help this pod: the gate acts on its
// onTimeout at once (initwarm/gate/wait.h). message is one human sentence, e.g. "warmup Job
// llama-warm-3f9a1c2b7d4e5f60 running for 2m10s on node gpu-07" or "no
// warmup scheduled for fingerprint 3f9a...: no eligible node (gpu-07
// (cordoned))".
// Pure: no I/O, `now` is an argument.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op {

struct ResolveQuery {
  std::string ns;
  std::string kernelcache;
  std::string node;
};

struct ResolveInputs {
  std::optional<core::KernelCache> kc;  // absent: not found
  std::vector<std::string> parse_errors;
  std::optional<NodeView> node;  // the queried node; absent: not found
  std::vector<NodeView> nodes;   // every node matching the KernelCache's nodeSelector
  std::vector<JobView> jobs;     // the KernelCache's Jobs
  std::vector<PodView> pods;     // their pods
  // How long a warmup pod may be unschedulable before StartCold pods are
  // told to go (Settings::unschedulable_grace).
  std::chrono::seconds unschedulable_grace{120};
};

struct ResolveResponse {
  int http_status = 200;
  nlohmann::json body;
};

ResolveResponse Resolve(const ResolveQuery& query, const ResolveInputs& in, Time now);

}  // namespace kc::op
