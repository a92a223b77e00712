// StatusWrite: when a pass writes the status it decided (the reconciler's
// step 4), as a pure decision.
//
// A pass that creates or deletes a Job keeps its status owed for up to
// kStatusCoalesceWindow instead of writing it; every pass of the key in
// that window decides from the owed status as if it had been written, and
// the first pass after the window writes it once. A node change's pass
// (its Job created), the passes its Job's and pod's first events bring, and
// a revert's pass (the Job deleted) then cost one status write, not one
// each: a status patch is the API server's dearest request of a change
// (a merge patch of the whole status, the object's managed fields, one
// etcd write), and the pool's Jobs go out first. The window runs from the
// first put-off pass, so a status is never owed longer than the window,
// however many passes follow.
#pragma once

#include <chrono>
#include <optional>

#include "operator/decide/types.h"

namespace kc::op {

inline constexpr std::chrono::milliseconds kStatusCoalesceWindow{2000};

enum class StatusWrite {
  kNothing,  // the status read is the status decided (or the object is going)
  kNow,      // write it in this pass
  kPutOff,   // keep it owed; a pass due at `due` writes it
};

struct StatusWriteInputs {
  bool differs = false;            // the decided status differs from the one read
  bool gone = false;               // the object is going: its finalizer is off
  bool job_written = false;        // this pass created or deleted a Job
  std::optional<Time> owed_since;  // an owed status's first put-off pass
  Time now{};
  std::chrono::milliseconds window = kStatusCoalesceWindow;
};

struct StatusWriteDecision {
  StatusWrite what = StatusWrite::kNothing;
  Time owed_since{};  // kPutOff: the window's start
  Time due{};         // kPutOff: when the window ends
};

StatusWriteDecision DecideStatusWrite(const StatusWriteInputs& in);

}  // namespace kc::op
