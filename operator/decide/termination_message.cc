#include "operator/decide/termination_message.h"

#include <optional>

#include "core/seal_report.h"

namespace kc::op {
namespace {

SealVerdict Judge(std::string_view message, std::optional<std::string_view> expected) {
  SealVerdict v;
  auto report = core::ParseSealReport(message);
  if (!report.ok()) {  // its messages start "BadTerminationMessage: "
    v.problem = SealProblem::kBadTerminationMessage;
    v.message = report.status().message();
    return v;
  }
  if (report->outcome == core::SealOutcome::kFailed) {
    v.problem = SealProblem::kSealFailed;
    v.message = "SealFailed: seal reported " + report->reason + ": " + report->message;
    return v;
  }
  SealResult& r = v.result;
  r.fingerprint = report->fingerprint;
  r.manifest_digest = report->manifest_digest;
  r.bytes = report->bytes;
  r.files = report->files;
  r.convergence = report->convergence;
  for (const auto& [phase, ms] : report->durations_ms) r.durations[phase] = ms / 1000.0;
  if (expected && r.fingerprint != *expected) {
    v.problem = SealProblem::kFingerprintMismatch;
    v.message =
        "FingerprintMismatch: sealed " + r.fingerprint + ", expected " + std::string(*expected);
  }
  return v;
}

StatusOr<SealResult> ToStatusOr(SealVerdict v) {
  switch (v.problem) {
    case SealProblem::kNone:
      return std::move(v.result);
    case SealProblem::kBadTerminationMessage:
      return InvalidArgumentError(v.message);
    case SealProblem::kSealFailed:
    case SealProblem::kFingerprintMismatch:
      break;
  }
  return FailedPreconditionError(v.message);
}

}  // namespace

const char* SealProblemName(SealProblem problem) {
  switch (problem) {
    case SealProblem::kNone:
      return "";
    case SealProblem::kBadTerminationMessage:
      return "BadTerminationMessage";
    case SealProblem::kSealFailed:
      return "SealFailed";
    case SealProblem::kFingerprintMismatch:
      return "FingerprintMismatch";
  }
  return "";
}

SealVerdict JudgeSealResult(std::string_view message, std::string_view expected_fingerprint) {
  return Judge(message, expected_fingerprint);
}

StatusOr<SealResult> ParseSealResult(std::string_view message) {
  return ToStatusOr(Judge(message, std::nullopt));
}

StatusOr<SealResult> CheckSealResult(std::string_view message,
                                     std::string_view expected_fingerprint) {
  return ToStatusOr(Judge(message, expected_fingerprint));
}

}  // namespace kc::op
