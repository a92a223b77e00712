// The seal container's termination message: what a warmup produced.
//
// `initwarm seal` writes one JSON object to /dev/termination-log:
//   {"fingerprint": "<16 hex>", "manifestDigest": "<64 hex sha256>",
//    "bytes": <int >= 0>, "files": <int >= 0>,
//    "durations": {"walkMs": 14, "hashMs": 16, "publishMs": 17, "totalMs": 53}}
// (durations optional; milliseconds, as seal writes them).
// Unknown fields are ignored (newer initwarm, older operator). The kubelet
// caps the message at 4096 bytes. The codec is core/seal_report.h (shared
// with initwarm seal); this adapts it to what Decide records (seconds) and
// turns a reported failure into FailedPrecondition "SealFailed: ...".
// Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/convergence.h"

namespace kc::op {

struct SealResult {
  std::string fingerprint;
  std::string manifest_digest;
  int64_t bytes = 0;
  int64_t files = 0;
  // Seconds per phase: "walk", "hash", "publish", "total" (from "<phase>Ms").
  std::map<std::string, double> durations;
  // The warmup's convergence passes, when it ran any (core/convergence.h).
  std::optional<core::ConvergenceSummary> convergence;
};

// Parses and checks the shape. InvalidArgument naming the field otherwise.
StatusOr<SealResult> ParseSealResult(std::string_view message);

// What was wrong with a warmup's seal result; the name is the Event reason
// Decide emits and the prefix of the message.
enum class SealProblem {
  kNone,
  kBadTerminationMessage,  // not a seal result (InvalidArgument)
  kSealFailed,             // seal reported a failure
  kFingerprintMismatch,    // sealed another fingerprint than the Job's
};
// "BadTerminationMessage" | "SealFailed" | "FingerprintMismatch" ("" for kNone).
const char* SealProblemName(SealProblem problem);

struct SealVerdict {
  SealProblem problem = SealProblem::kNone;
  SealResult result;    // when problem == kNone
  std::string message;  // otherwise: "<SealProblemName>: <what>"
};

// The typed form of CheckSealResult.
SealVerdict JudgeSealResult(std::string_view message, std::string_view expected_fingerprint);

// ParseSealResult, then requires result.fingerprint == expected_fingerprint.
// A mismatch is FailedPrecondition with the message
// "FingerprintMismatch: sealed <got>, expected <want>".
StatusOr<SealResult> CheckSealResult(std::string_view message,
                                     std::string_view expected_fingerprint);

}  // namespace kc::op
