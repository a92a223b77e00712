// The resolve answer: the body of a 200 from the operator's
// GET /v1/resolve?namespace=&kernelcache=&node= (operator/controller/resolve.cc
// writes it, initwarm's resolve client reads it). One codec for both sides.
//
//   {"fingerprint","state","directory":"v1/<fp>","manifestDigest","message",
//    "node":{"gpuProduct","computeCapability","driver","cudaDriver","arch"},
//    "final": true, "reason": "<why>",   (final/reason only on a final answer)
//    "startCold": true, "reason": "WarmupUnschedulable"}   (only when set)
//
// state: Pending | Warming | Ready | Degraded | Failed | Stale | Unknown
// (kResolveStates: the fingerprint states but Absent, which the operator
// answers as Ready or Pending, every gate version knowing those; plus
// Unknown, the state of a final answer).
// A final answer (waiting cannot change it: InvalidSpec, NodeNotSelected,
// NodeHasNoFingerprint) may carry an empty fingerprint and no node.
// startCold: the fingerprint's warmup cannot run now (its pod has been
// unschedulable longer than the operator's grace: a full GPU pool), so a
// pod with onTimeout StartCold should start cold at once instead of waiting
// out its timeout; onTimeout Fail keeps waiting. `reason` says why.
// Decoding is strict about types and values (InvalidArgument naming the
// field), ignores unknown fields, never throws. Pure.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/api_types.h"
#include "core/fingerprint.h"

namespace kc::core {

// The state of an answer: a fingerprint state (core::fp_state) but Absent,
// or Unknown.
enum class ResolveState { kPending, kWarming, kReady, kDegraded, kFailed, kStale, kUnknown };

inline constexpr std::string_view kResolveUnknown = "Unknown";
inline constexpr std::array<ResolveState, 7> kResolveStates = {
    ResolveState::kPending, ResolveState::kWarming, ResolveState::kReady,  ResolveState::kDegraded,
    ResolveState::kFailed,  ResolveState::kStale,   ResolveState::kUnknown};

constexpr std::string_view ResolveStateName(ResolveState s) {
  switch (s) {
    case ResolveState::kPending:
      return fp_state::kPending;
    case ResolveState::kWarming:
      return fp_state::kWarming;
    case ResolveState::kReady:
      return fp_state::kReady;
    case ResolveState::kDegraded:
      return fp_state::kDegraded;
    case ResolveState::kFailed:
      return fp_state::kFailed;
    case ResolveState::kStale:
      return fp_state::kStale;
    case ResolveState::kUnknown:
      return kResolveUnknown;
  }
  return "?";
}
// The exact names; InvalidArgument "\"Absent\" is not one of Pending, ...".
// The operator also reads a fingerprint's status.state with it.
StatusOr<ResolveState> ParseResolveState(std::string_view name);

struct ResolveAnswer {
  std::string fingerprint;  // 16-hex id ("" only on a final answer)
  ResolveState state = ResolveState::kUnknown;
  std::string directory;        // "v1/<fingerprint>"
  std::string manifest_digest;  // sha256 of the manifest the operator recorded
  std::string message;          // a human sentence: why it is in this state
  NodeFacts node;               // the node's facts (absent on a fingerprint-less final answer)
  bool final = false;
  std::string reason;       // on a final or a startCold answer
  bool start_cold = false;  // "startCold"
  friend bool operator==(const ResolveAnswer&, const ResolveAnswer&) = default;
};

std::string ResolveAnswerToJson(const ResolveAnswer& a);
StatusOr<ResolveAnswer> ParseResolveAnswer(std::string_view body);

// The endpoint's base URL, as the operator's --resolve-url and the gate's
// --resolve-url spell it: "http://host[:port][/prefix]" (plain HTTP, the
// in-cluster Service; a trailing "/v1/resolve" names the same endpoint).
// InvalidArgument names the URL and what is wrong. Pure.
struct ResolveUrl {
  std::string host;  // without IPv6 brackets
  std::string port = "80";
  std::string prefix;  // path before /v1/resolve, no trailing slash
};
StatusOr<ResolveUrl> ParseResolveUrl(std::string_view url);

}  // namespace kc::core
