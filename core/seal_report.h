// The seal result: what `initwarm seal` (the warmup Job's main container)
// reports as one JSON line on stdout and in its termination message, and
// what the operator reads back from the pod status. One codec for both
// sides (initwarm/cache/seal.cc writes, operator/decide/termination_message.cc reads).
//
//   {"fingerprint": "<16 hex>", "manifestDigest": "<64 hex>", "bytes": n,
//    "files": n, "directory": "...", "outcome": "Published" | "Replaced",
//    "durations": {"walkMs", "hashMs", "publishMs", "totalMs"},
//    "replacedTo": "..." (when replaced), "warning": "..." (when any),
//    "convergence": {"passes": n, "converged": bool, "lastEntries": n,
//                    "lastAutotune": n, "still": ["<framework> <detail>", ...]}
//    (when the warmup ran convergence passes; core/convergence.h)}
//   failure: {"fingerprint", "outcome": "Failed", "reason": <status code
//    name>, "message": <text>}
//
// ParseSealReport decodes the outcome (one of the three names, else an
// error; absent reads as Published), checks the shape of a success (fingerprint id, digest of 64
// lower-case hex, non-negative integer sizes, numeric durations) and reads
// a failure as such; unknown fields are ignored (newer initwarm,
// older operator). Errors are InvalidArgument starting
// "BadTerminationMessage: " and naming the field. Never throws. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/convergence.h"

namespace kc::core {

// What the seal did: published a cache where there was none, replaced a
// READY one (--replace), or failed.
enum class SealOutcome { kPublished, kReplaced, kFailed };
inline constexpr std::array<SealOutcome, 3> kSealOutcomes = {
    SealOutcome::kPublished, SealOutcome::kReplaced, SealOutcome::kFailed};
// "Published" | "Replaced" | "Failed"
std::string_view SealOutcomeName(SealOutcome o);
StatusOr<SealOutcome> ParseSealOutcome(std::string_view name);

struct SealReport {
  std::string fingerprint;
  SealOutcome outcome = SealOutcome::kPublished;
  std::string manifest_digest;
  std::int64_t bytes = 0;
  std::int64_t files = 0;
  std::string directory;
  std::string replaced_to;
  std::string warning;
  std::optional<ConvergenceSummary> convergence;
  // Milliseconds per phase: "walk", "hash", "publish", "total" (JSON "<phase>Ms").
  std::map<std::string, double> durations_ms;
  // Failed only.
  std::string reason;
  std::string message;
  friend bool operator==(const SealReport&, const SealReport&) = default;
};

std::string SealReportToJson(const SealReport& r);
StatusOr<SealReport> ParseSealReport(std::string_view json);

}  // namespace kc::core
