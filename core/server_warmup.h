// spec.warmup.server: a warmup that runs the model's own server.
//
// Instead of a command in spec.image, the warmup pod runs the pod template
// of the workload the KernelCache gates (a Deployment or StatefulSet it
// names, or an inline template): the same image, command, args, env,
// volumes and GPU count, so the server compiles under the very cache keys
// it will look up when serving. Our driver sends it the requests below once
// it is ready, then seals (operator/decide/server_warmup_job.h builds the
// pod, initwarm drive runs the plan).
//
// This file holds the section's types, its JSON codec, its validation, the
// facts of the serving container the fingerprint keys on, and the request
// plan. Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/warmup_plan.h"

namespace kc::core {

enum class WorkloadKind { kDeployment, kStatefulSet };
std::optional<WorkloadKind> ParseWorkloadKind(std::string_view name);
std::string_view WorkloadKindName(WorkloadKind kind);

// "workloadRef": {kind, name}: an apps/v1 workload in the KernelCache's
// namespace whose spec.template the warmup runs.
struct WorkloadRef {
  std::string kind;  // "kind": Deployment | StatefulSet
  std::string name;  // "name"
  bool empty() const { return kind.empty() && name.empty(); }
  friend bool operator==(const WorkloadRef&, const WorkloadRef&) = default;
};

// One entry of "requests".
struct WarmupRequest {
  std::string method;                          // "method": "" = POST with a body, else GET
  std::string path;                            // "path": required, starts with '/'
  std::map<std::string, std::string> headers;  // "headers"
  nlohmann::json body;                         // "body": null = none; a string is sent as is
  // "promptTokens": one request per length, body.prompt set to a prompt of
  // that many words (about as many tokens); needs an object body.
  std::vector<int64_t> prompt_tokens;
  int32_t repeat = 1;  // "repeat": each request (or length) this many times, 1..100
  friend bool operator==(const WarmupRequest&, const WarmupRequest&) = default;
};

inline constexpr int64_t kDefaultRequestTimeoutSeconds = 600;
inline constexpr int32_t kMaxRequestRepeat = 100;
inline constexpr int64_t kMaxPromptTokens = 1 << 17;

struct ServerSpec {
  WorkloadRef workload_ref;  // "workloadRef"; exactly one of workloadRef / template
  // "template": a core/v1 PodTemplateSpec. With workloadRef the operator
  // fills it (in memory, never written back) from the workload.
  nlohmann::json pod_template;
  // True when pod_template was filled from workloadRef (not part of the
  // JSON): the one source then is the workload.
  bool from_workload = false;
  std::string container;  // "container": the serving container; "" = the one asking for GPUs
  int32_t port = 0;       // "port": "" = the readiness probe's port, else the first containerPort
  // "readinessPath": "" = the readiness probe's httpGet path; with neither,
  // readiness is a TCP connect to the port.
  std::string readiness_path;
  int32_t tensor_parallel = 0;          // "parallel.tensor": declared layout, 0 = not declared
  int32_t pipeline_parallel = 0;        // "parallel.pipeline"
  std::vector<WarmupRequest> requests;  // "requests"
  int64_t request_timeout_seconds = kDefaultRequestTimeoutSeconds;  // "requestTimeoutSeconds"
  friend bool operator==(const ServerSpec&, const ServerSpec&) = default;
};

// JSON <-> struct. Errors name the field path under `path`
// ("spec.warmup.server.requests[1].path: expected a string").
ServerSpec ServerSpecFromJson(const nlohmann::json& j, const std::string& path,
                              std::vector<std::string>* errors);
nlohmann::json ServerSpecToJson(const ServerSpec& s);

// What the fingerprint, the warmup pod and the parity check read from the
// template: the serving container and the pod's GPU count.
struct ServingContainer {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  // Literal values of the variables the fingerprint keys on (IsFingerprintEnv).
  std::map<std::string, std::string> keyed_env;
  int64_t gpus = 0;            // nvidia.com/gpu over every container (limits, else requests)
  int32_t port = 0;            // resolved: spec port, readiness probe port, first containerPort
  std::string readiness_path;  // resolved: spec, readiness probe httpGet path, or ""
};

// The serving container of a resolved template. InvalidArgument naming
// the field under spec.warmup.server (no template yet, no containers, the
// named container missing, no image, no port to drive, a GPU quantity that
// is not a whole number).
StatusOr<ServingContainer> ServingContainerOf(const ServerSpec& s);

// Checks that need no template (the template itself is checked once
// resolved, by CheckServerTemplate): exactly one source, the workload kind,
// the requests, the bounds. Each message names the field and the fix.
std::vector<std::string> CheckServer(const ServerSpec& s);
// Checks of a resolved template: ServingContainerOf, and what a warmup pod
// may not do (hostNetwork, hostPID, hostIPC, a privileged container, volume
// names the operator uses). `where` names the template's source
// ("spec.warmup.server.template" or "Deployment llm's spec.template").
std::vector<std::string> CheckServerTemplate(const ServerSpec& s, const std::string& where);

// nvidia.com/gpu over the containers of a pod spec (limits, else requests).
// InvalidArgument for a quantity that is not a whole number.
StatusOr<int64_t> PodGpus(const nlohmann::json& pod_spec);

// sha256 of the canonical {"args","command"} of the serving container: the
// fingerprint's "server" input (a new flag is a new cache).
std::string ServerCommandDigest(const ServingContainer& c);

// spec.warmup.server.requests expanded: one call per prompt length and
// repetition, bodies rendered. Call after CheckServer passed.
std::vector<WarmupCall> PlanWarmupCalls(const ServerSpec& s);

// A prompt of `words` words.
std::string PromptOfWords(int64_t words);

}  // namespace kc::core
