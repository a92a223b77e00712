// The miss watcher's side of the miss channel (core/miss_channel.h): sends
// the pod's full miss report to the operator, authenticated by the pod's
// projected ServiceAccount token, and decides when to send again.
//
// The report is the whole current set, so sending it twice is harmless:
// SendDue sends when the set changed since the last accepted report, again
// every kMissReportRefresh (a restarted operator or a new leader relearns
// it), and after a failure only once its backoff has passed (doubling from
// kMissRetryFirst to kMissRetryMax). A cold view (no fingerprint) and an
// empty set never sent before have nothing to say.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "base/status.h"
#include "core/miss_report.h"

namespace kc::initwarm {

inline constexpr std::chrono::seconds kMissReportRefresh{300};
inline constexpr std::chrono::seconds kMissRetryFirst{5};
inline constexpr std::chrono::seconds kMissRetryMax{300};

// The token the kubelet projects (a symlink into its ..data directory, so
// it is read through links; re-read for each report, the kubelet rotates
// it). At most 64 KiB; surrounding whitespace trimmed. NotFound when the
// file is missing, InvalidArgument when empty or too large.
StatusOr<std::string> ReadMissToken(const std::filesystem::path& file);

// POSTs `report` to <base_url>/v1/misses with "Authorization: Bearer
// <token>". The operator's answer, or the error it gave (StatusForHttp
// codes: 401 Unauthenticated, 403 PermissionDenied, 503 Unavailable...),
// or a transport error.
StatusOr<core::MissReportAnswer> SendMissReport(const std::string& base_url,
                                                const std::string& token,
                                                const core::MissReport& report,
                                                std::chrono::milliseconds timeout);

using MissClock = std::chrono::steady_clock;

struct MissSendState {
  std::string sent;                 // the last accepted report's JSON ("" none)
  MissClock::time_point sent_at;    // when it was accepted
  MissClock::time_point retry_at;   // after a failure: not before this
  std::chrono::seconds backoff{0};  // the failure backoff now (0: none)
};

// Whether to send `report_json` now. Pure.
bool SendDue(const MissSendState& s, const core::MissReport& report, const std::string& report_json,
             MissClock::time_point now);

// The state after a send of `report_json` at `now` that succeeded or not.
MissSendState AfterSend(MissSendState s, bool ok, const std::string& report_json,
                        MissClock::time_point now);

}  // namespace kc::initwarm
