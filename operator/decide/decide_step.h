// What Decide's steps (operator/decide/decide_*.h) share: the effects a step
// returns (actions, Events, the earliest timer), a condition verdict, and
// small helpers on Jobs and fingerprint statuses. Each step is a function
// from what it reads to a verdict value; operator/decide/decide.cc threads the
// verdicts from step to step and assembles the Plan.
// Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op::decide {

using std::chrono::seconds;

inline constexpr seconds kSealGrace{60};  // wait this long for a succeeded Job's pod to appear
inline constexpr seconds kGcRetry{300};   // a failed GC Job is retried after this
inline constexpr size_t kMaxListed = 5;   // nodes/fingerprints named in one message

// What a step asks for besides its verdict, in the order it asked.
struct Effects {
  std::vector<Action> actions;  // creates and deletes
  std::vector<Action> events;   // kEmitEvent
  std::optional<Time> wake;     // reconcile again at the earliest of these

  void Event(const std::string& type, const std::string& reason, const std::string& message);
  // Deletes `j` unless it is being deleted already (the Plan drops a
  // second delete of the same Job).
  void DeleteJob(const JobView& j);
  // Stops `j`, a running warmup of `f`, the same way (kCancelJob: in the
  // foreground) and records it (RememberStopped): the lock its prepare took
  // stays on the volume, and only the operator knows its owner is gone once
  // the Job is. A Job already being deleted in the foreground (a pass whose
  // status write was put off or lost asked for it) is recorded all the same.
  void CancelWarmup(const JobView& j, core::FingerprintStatus& f);
  // kDeleteJob or kCancelJob of `j` (uid precondition) unless it is being
  // deleted already.
  void RemoveJob(Action::Kind kind, const JobView& j);
  // A timer at `t`; one in the past fires a second from `now`.
  void WakeAt(Time t, Time now);
  void Append(Effects other);
};

// spec.retention, parsed once the spec is valid (core::ValidateSpec accepted
// every field), so no step parses it again. The strings are kept for
// messages ("stale for more than 24h").
struct Retention {
  seconds stale_after{86400};
  seconds absent_after{168 * 3600};
  std::optional<seconds> purge;      // purgeSchedule; none when unset
  std::optional<int64_t> max_bytes;  // maxBytes; none when unset
};

// A condition as a step decides it; Decide adds type, observedGeneration
// and lastTransitionTime.
struct ConditionVerdict {
  bool value = false;
  std::string reason;
  std::string message;
};

// True when `prev` does not already say (value, reason).
bool Changed(const api::Condition* prev, bool value, const std::string& reason);

// "a, b, c, d, e and 4 more"
std::string ListSome(const std::vector<std::string>& v);
// "<id> (<product>, sm <cc>, driver <d>, CUDA <c>, <arch>)"
std::string Describe(const core::FingerprintStatus& f);

// Job labels.
bool Ours(const JobView& j, const std::string& kc_name);
std::string Component(const JobView& j);  // "warmup" when unlabelled
std::string JobFingerprint(const JobView& j);
// A warmup Job of `kc_name` for fingerprint `id`.
bool WarmupOf(const JobView& j, const std::string& kc_name, const std::string& id);
const JobView* FindJob(const std::vector<JobView>& jobs, const std::string& name);

// Records `j`, an unfinished warmup of `f` deleted (or about to be) in the
// foreground, in f.cancelled_job_uids: newest last, at most
// core::kMaxCancelledJobs, once. A finished Job needs no record (DeadOwners
// names it from its condition).
void RememberStopped(core::FingerprintStatus& f, const JobView& j);

// Moves f.state (and its lastTransitionTime) when it changes.
void SetState(core::FingerprintStatus& f, std::string_view state, Time now);

// Backoff after `failures` failed warmups: base * 2^(failures-1), capped.
seconds Backoff(const Settings& s, int32_t failures);
// When the next warmup of `f` may start after its last failure.
Time RetryAt(const core::FingerprintStatus& f, const Settings& s, Time now);

}  // namespace kc::op::decide
