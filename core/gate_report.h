// The gate's report: what `initwarm wait` (the injected init container
// `kernelcache-wait` of a model pod) found, written as one JSON object to
// its termination message file (/dev/termination-log, or
// $KC_TERMINATION_LOG / --termination-log). The kubelet copies it into the
// pod's status (initContainerStatuses[].state.terminated.message), which is
// the channel the operator trusts: only the kubelet writes pod status, and
// only for the container that wrote the file (an unauthenticated HTTP
// report could be sent by anyone).
//
//   {"outcome": "Warm" | "Cold" | "Failed",
//    "reason": "Validated" | "Timeout" | "WarmupFailed" | "Quarantined" |
//              "InvalidSpec" | "NodeNotSelected" | "NodeHasNoFingerprint" |
//              "Mismatch" | "Error",
//    "fingerprint": "<16 hex>" (or ""), "manifestDigest": "<64 hex>" (the
//    cache in use, Warm only), "message": "<one human sentence>",
//    "view", "target", "waitedMs",
//    "quarantined": [{"fingerprint", "expectedDigest" (what the operator
//       told the gate), "foundDigest" (READY on the volume), "level",
//       "file", "reason", "movedTo" ("" when it could not be moved)}]}
//
// Encoding bounds every string so the whole object stays under the
// kubelet's 4096-byte cap (kMaxReportBytes); decoding is strict about
// types (InvalidArgument naming the field), ignores unknown fields (newer
// initwarm, older operator) and never throws. Used by initwarm (writer)
// and the operator (reader). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::core {

inline constexpr size_t kMaxReportBytes = 4096;
inline constexpr char kGateContainer[] = "kernelcache-wait";
inline constexpr char kConsumerLabel[] = "kernelcache.io/consumer";

namespace gate_reason {
inline constexpr std::string_view kValidated = "Validated";
inline constexpr std::string_view kTimeout = "Timeout";
inline constexpr std::string_view kWarmupFailed = "WarmupFailed";
inline constexpr std::string_view kQuarantined = "Quarantined";
inline constexpr std::string_view kInvalidSpec = "InvalidSpec";
inline constexpr std::string_view kNodeNotSelected = "NodeNotSelected";
inline constexpr std::string_view kNodeHasNoFingerprint = "NodeHasNoFingerprint";
inline constexpr std::string_view kMismatch = "Mismatch";
inline constexpr std::string_view kError = "Error";
// The operator said the fingerprint's warmup cannot be scheduled (a full GPU
// pool); with onTimeout StartCold the pod starts cold at once.
inline constexpr std::string_view kWarmupUnschedulable = "WarmupUnschedulable";
}  // namespace gate_reason

// What the gate did: the view is ready (Warm), the pod starts with an
// empty cache (Cold, onTimeout StartCold), or the pod fails (Failed).
enum class GateOutcome { kWarm, kCold, kFailed };

constexpr std::string_view GateOutcomeName(GateOutcome o) {
  switch (o) {
    case GateOutcome::kWarm:
      return "Warm";
    case GateOutcome::kCold:
      return "Cold";
    case GateOutcome::kFailed:
      return "Failed";
  }
  return "?";
}
// The exact names; InvalidArgument "\"Sideways\" is not one of Warm, Cold, Failed".
StatusOr<GateOutcome> ParseGateOutcome(std::string_view name);

struct GateQuarantine {
  std::string fingerprint;
  std::string expected_digest;  // the operator's manifestDigest ("" when none was given)
  std::string found_digest;     // READY's digest on the volume ("" when unreadable)
  std::string level;            // core::LevelName of the failed rung
  std::string file;
  std::string reason;
  std::string moved_to;  // the quarantine directory; "" when not moved
  friend bool operator==(const GateQuarantine&, const GateQuarantine&) = default;
};

struct GateReport {
  GateOutcome outcome = GateOutcome::kFailed;
  std::string reason;  // gate_reason::*
  std::string fingerprint;
  std::string manifest_digest;
  std::string message;
  std::string view;
  std::string target;
  std::int64_t waited_ms = 0;
  std::vector<GateQuarantine> quarantined;
  // How this pod differs from what was warmed (the admission webhook's
  // parity annotation, handed to the gate as env KC_PARITY); "" = none.
  std::string parity;
  friend bool operator==(const GateReport&, const GateReport&) = default;
};

// One line of JSON, at most kMaxReportBytes (long strings are cut, at most
// 4 quarantine entries are kept).
std::string GateReportToJson(const GateReport& r);
StatusOr<GateReport> ParseGateReport(std::string_view json);

}  // namespace kc::core
