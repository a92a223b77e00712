#include "operator/termination_message.h"

#include "core/seal_report.h"

namespace kc::op {

StatusOr<SealResult> ParseSealResult(std::string_view message) {
  KC_ASSIGN_OR_RETURN(core::SealReport report, core::ParseSealReport(message));
  if (report.outcome == "Failed") {
    return FailedPreconditionError("SealFailed: seal reported " + report.reason + ": " +
                                   report.message);
  }
  SealResult r;
  r.fingerprint = report.fingerprint;
  r.manifest_digest = report.manifest_digest;
  r.bytes = report.bytes;
  r.files = report.files;
  for (const auto& [phase, ms] : report.durations_ms) r.durations[phase] = ms / 1000.0;
  return r;
}

StatusOr<SealResult> CheckSealResult(std::string_view message,
                                     std::string_view expected_fingerprint) {
  KC_ASSIGN_OR_RETURN(SealResult r, ParseSealResult(message));
  if (r.fingerprint != expected_fingerprint) {
    return FailedPreconditionError("FingerprintMismatch: sealed " + r.fingerprint + ", expected " +
                                   std::string(expected_fingerprint));
  }
  return r;
}

}  // namespace kc::op
