// The wait's state machine (wait.h): the state one Wait carries from round
// to round, and the pure steps of a round. A round resolves (ApplyAnswer,
// then once CrossCheck), checks READY (CheckReady), validates and builds the
// view where READY is usable (wait.cc), then decides whether to poll again
// (Decide), says why it waits (ProgressLine) and sleeps (PollDelayMs). A
// wait that ends without a cache is concluded by ConcludeWithoutCache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/gate_report.h"
#include "initwarm/cache/ready_state.h"
#include "initwarm/gate/wait.h"

namespace kc::initwarm {

struct WaitLoop {
  std::int64_t start = 0;     // clock ms when the wait began
  std::int64_t deadline = 0;  // start + the timeout
  std::string fp;             // the fingerprint; "" until resolved
  core::ResolveState state = core::ResolveState::kUnknown;
  std::string reason = "waiting for the first answer";  // why it waits now
  std::string expected_digest;                          // the operator's manifestDigest for fp
  std::int64_t digest_mismatch_since = -1;  // when READY's digest first differed; -1 none
  std::optional<core::NodeFacts> node;
  bool cross_checked = false;  // the local probe was asked (or there is none)
  bool failed = false;         // the operator reports the warmup Failed
  // The operator's answer is definitive: no cache for this pod.
  std::string final_reason;
  // The operator's last answer said startCold (its warmup cannot be
  // scheduled): with --on-timeout StartCold the pod goes cold now.
  std::string start_cold_reason;
  std::optional<core::GateQuarantine> found;  // the cache failed validation
  std::string validation_failure;             // the last validation failure
  std::int64_t last_log = 0;                  // clock ms of the last progress line
};

// The state before the first round, at clock `now_ms`; `has_prober` false
// skips the cross-check.
WaitLoop StartWait(const WaitOptions& o, bool has_prober, std::int64_t now_ms);

// Takes one resolver answer (or its error, which only becomes the reason).
// FailedPrecondition when the operator's fingerprint is not --fingerprint.
Status ApplyAnswer(const WaitOptions& o, const StatusOr<ResolveAnswer>& answer, WaitLoop* w);

// Whether this answer calls for the one local cross-check.
bool NeedsCrossCheck(const WaitLoop& w, const ResolveAnswer& answer);

// The cross-check of the operator's node facts with the local probe:
// FailedPrecondition naming both on disagreement; the probed facts on
// agreement. A failed probe skips it, and `note` says why.
Status CrossCheck(const WaitOptions& o, const ResolveAnswer& answer,
                  const StatusOr<ProbeResult>& probe, WaitLoop* w, std::string* note);

// Whether READY (read at clock `polled_ms`) is to be validated now: present,
// and its digest the operator's or its grace over. Otherwise the reason says
// what it waits for.
bool CheckReady(const WaitOptions& o, const ReadyState& ready, std::int64_t polled_ms, WaitLoop* w);

// The report of a validated cache: the view points at `target`.
WaitResult WarmResult(const WaitOptions& o, const WaitLoop& w, const std::filesystem::path& target,
                      const std::string& manifest_digest, std::int64_t now_ms,
                      core::GateReport* rep);

enum class WaitNext { kPoll, kEnd };

// After a round without a usable cache: end now (a quarantine, startCold
// under StartCold, a failed warmup, the deadline) or poll again.
WaitNext Decide(const WaitOptions& o, const WaitLoop& w, std::int64_t now_ms);

// The human line saying why it waits, once every log_every_s; updates
// last_log when it gives one.
std::optional<std::string> ProgressLine(const WaitOptions& o, std::int64_t now_ms, WaitLoop* w);

// How long to sleep before round `attempt` + 1: the backoff, never past the
// deadline, at least 1 ms.
std::int64_t PollDelayMs(const WaitOptions& o, int attempt, const WaitLoop& w, std::int64_t now_ms);

// Why a wait ended without a cache: the error it returns (its message says
// why), the gate reason, and whether it ends early under StartCold.
struct WaitEnd {
  Status status;
  std::string reason;  // core::gate_reason::*, or the operator's reason
  bool start_cold_now = false;
};
WaitEnd ConcludeWithoutCache(const WaitOptions& o, const WaitLoop& w, std::int64_t waited_ms);

}  // namespace kc::initwarm
