#include "initwarm/gate/wait_loop.h"

#include <algorithm>

#include "base/duration.h"
#include "core/layout.h"

namespace kc::initwarm {

namespace {

std::string DescribeFacts(const core::NodeFacts& n) { return core::NodeFactsToJson(n); }

std::string WhatIsAwaited(const std::string& fp) {
  return fp.empty() ? std::string("this node's fingerprint") : "fingerprint " + fp;
}

}  // namespace

WaitLoop StartWait(const WaitOptions& o, bool has_prober, std::int64_t now_ms) {
  WaitLoop w;
  w.start = now_ms;
  w.deadline = now_ms + o.timeout_s * 1000;
  w.fp = o.fingerprint;
  w.state = w.fp.empty() ? core::ResolveState::kUnknown : core::ResolveState::kPending;
  w.cross_checked = !has_prober;
  w.last_log = now_ms - o.log_every_s * 1000;
  return w;
}

Status ApplyAnswer(const WaitOptions& o, const StatusOr<ResolveAnswer>& answer, WaitLoop* w) {
  if (!answer.ok()) {
    w->reason = "operator resolve endpoint: " + answer.status().ToString();
    return OkStatus();
  }
  const ResolveAnswer& ans = *answer;
  w->state = ans.state;
  w->reason =
      ans.message.empty() ? "state " + std::string(core::ResolveStateName(ans.state)) : ans.message;
  w->start_cold_reason.clear();
  if (ans.start_cold) {
    w->start_cold_reason =
        ans.reason.empty() ? std::string(core::gate_reason::kWarmupUnschedulable) : ans.reason;
  }
  if (ans.final) {
    w->final_reason =
        ans.reason.empty() ? std::string(core::gate_reason::kInvalidSpec) : ans.reason;
  }
  if (core::IsFingerprintId(ans.fingerprint)) {
    if (!o.fingerprint.empty() && ans.fingerprint != o.fingerprint) {
      return FailedPreconditionError("the operator resolves node " + o.node + " to fingerprint " +
                                     ans.fingerprint + " but --fingerprint is " + o.fingerprint);
    }
    w->fp = ans.fingerprint;
    w->node = ans.node;
    w->expected_digest = ans.manifest_digest;
  }
  if (ans.state == core::ResolveState::kFailed) w->failed = true;
  return OkStatus();
}

bool NeedsCrossCheck(const WaitLoop& w, const ResolveAnswer& answer) {
  return !w.cross_checked && !w.fp.empty() && !answer.final;
}

Status CrossCheck(const WaitOptions& o, const ResolveAnswer& answer,
                  const StatusOr<ProbeResult>& probe, WaitLoop* w, std::string* note) {
  w->cross_checked = true;
  if (!probe.ok()) {
    *note = "no local cross-check of the fingerprint: " + probe.status().message();
    return OkStatus();
  }
  if (!(probe->facts == answer.node)) {
    return FailedPreconditionError(
        "fingerprint disagreement: the operator says node " + o.node + " is " +
        DescribeFacts(answer.node) + " (fingerprint " + w->fp + ") but the local probe (" +
        probe->source + ") sees " + DescribeFacts(probe->facts) +
        "; the node's GPU labels are stale (is GPU Feature Discovery running?)");
  }
  w->node = probe->facts;
  return OkStatus();
}

bool CheckReady(const WaitOptions& o, const ReadyState& ready, std::int64_t polled_ms,
                WaitLoop* w) {
  // READY absent: not published yet. READY garbage, a special file, or
  // naming a manifest that does not parse: corruption, refused by the
  // validation at once (quarantined and reported). A well-formed READY whose
  // digest is not the operator's: a short grace first.
  const bool present = ready.kind != ReadyState::kAbsent;
  if (!w->fp.empty() && !present && w->state == core::ResolveState::kReady) {
    w->reason = "the operator reports fingerprint " + w->fp + " Ready but " +
                core::Layout(o.root).Ready(w->fp).string() +
                " is missing: is the cache volume mounted at --root?";
  }
  if (ready.kind != ReadyState::kDigest || w->expected_digest.empty()) return present;
  // A READY the operator has not recorded: a re-warm may have just sealed
  // it (the operator records the digest moments later), or someone rewrote
  // the cache. Wait out a short grace before refusing.
  const std::string& on_disk = ready.digest;
  if (on_disk == w->expected_digest) {
    w->digest_mismatch_since = -1;
    return true;
  }
  if (w->digest_mismatch_since < 0) w->digest_mismatch_since = polled_ms;
  if (polled_ms - w->digest_mismatch_since >= o.digest_grace_s * 1000) return true;
  w->reason = "READY of fingerprint " + w->fp + " holds digest " + on_disk.substr(0, 12) +
              "..., the operator recorded " + w->expected_digest.substr(0, 12) +
              "...; waiting up to " + std::to_string(o.digest_grace_s) +
              "s for the operator to catch up before refusing it";
  return false;
}

WaitResult WarmResult(const WaitOptions& o, const WaitLoop& w, const std::filesystem::path& target,
                      const std::string& manifest_digest, std::int64_t now_ms,
                      core::GateReport* rep) {
  WaitResult r{core::GateOutcome::kWarm, w.fp,
               "validated up to " + std::string(core::LevelName(o.verify)), target,
               now_ms - w.start};
  rep->outcome = core::GateOutcome::kWarm;
  rep->reason = std::string(core::gate_reason::kValidated);
  rep->fingerprint = w.fp;
  rep->manifest_digest = manifest_digest;
  rep->message = r.reason;
  rep->target = target.string();
  rep->waited_ms = r.waited_ms;
  return r;
}

WaitNext Decide(const WaitOptions& o, const WaitLoop& w, std::int64_t now_ms) {
  // The cache is bad: say so now, do not wait out the timeout.
  if (w.found) return WaitNext::kEnd;
  // Nothing usable on the volume and the warmup cannot run now: a StartCold
  // pod starts cold at once; a Fail pod keeps waiting (a GPU may free up, or
  // the warmup's priority preempt one).
  if (!w.start_cold_reason.empty() && o.start_cold_on_timeout) return WaitNext::kEnd;
  if (w.failed || now_ms >= w.deadline) return WaitNext::kEnd;
  return WaitNext::kPoll;
}

std::optional<std::string> ProgressLine(const WaitOptions& o, std::int64_t now_ms, WaitLoop* w) {
  if (now_ms - w->last_log < o.log_every_s * 1000) return std::nullopt;
  w->last_log = now_ms;
  return "waiting " + FormatDuration(std::chrono::seconds((now_ms - w->start) / 1000)) + " for " +
         WhatIsAwaited(w->fp) + " (" + std::string(core::ResolveStateName(w->state)) +
         "): " + w->reason;
}

std::int64_t PollDelayMs(const WaitOptions& o, int attempt, const WaitLoop& w,
                         std::int64_t now_ms) {
  return std::min(NextPollDelayMs(attempt, o.poll_initial_ms, o.poll_max_ms),
                  std::max<std::int64_t>(1, w.deadline - now_ms));
}

WaitEnd ConcludeWithoutCache(const WaitOptions& o, const WaitLoop& w, std::int64_t waited_ms) {
  WaitEnd end;
  if (!w.final_reason.empty()) {
    end.status = NotFoundError("the operator says this pod gets no cache (" + w.final_reason +
                               "): " + w.reason);
    end.reason = w.final_reason;
  } else if (w.found) {
    end.status = DataLossError(w.reason +
                               "; the operator is told through this container's termination "
                               "message and re-warms it");
    end.reason = std::string(core::gate_reason::kQuarantined);
  } else if (!w.start_cold_reason.empty() && o.start_cold_on_timeout) {
    end.status = UnavailableError("the operator says the warmup of " + WhatIsAwaited(w.fp) +
                                  " cannot run now (" + w.start_cold_reason + "): " + w.reason);
    end.reason = w.start_cold_reason;
    end.start_cold_now = true;
  } else {
    std::string why =
        (w.failed ? "warmup failed"
                  : "timed out after " + FormatDuration(std::chrono::seconds(waited_ms / 1000))) +
        " waiting for " + WhatIsAwaited(w.fp) + ": " + w.reason;
    if (!w.validation_failure.empty() && w.validation_failure != w.reason) {
      why += " (earlier: " + w.validation_failure + ")";
    }
    end.status = DeadlineExceededError(why);
    end.reason =
        std::string(w.failed ? core::gate_reason::kWarmupFailed : core::gate_reason::kTimeout);
  }
  return end;
}

}  // namespace kc::initwarm
