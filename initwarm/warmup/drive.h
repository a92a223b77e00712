// Drive: warm a server warmup's own server (a native sidecar of the warmup
// pod, e.g. vLLM) so it compiles its kernels into the staging directory.
//
//   1. wait for the server on the loopback: GET `ready_path` until a 2xx,
//      or (no ready path) until a TCP connection opens; one poll a second;
//   2. send every call of the plan in order, each bounded by
//      `request_timeout`; a non-2xx reply or a transport failure ends the
//      drive, naming the call;
//   3. detach the view (drive_staging.h): what the server writes from now
//      on lands outside the staging directory;
//   4. wait until the staging tree is settled (two looks `settle` apart
//      list the same files, sizes and times).
// `timeout` bounds all four. The caller seals the staging directory after.
//
// With convergence passes (`max_passes` > 0; core/convergence.h) the
// driver then points the view at the staging directory again, has the
// server restarted (`restart_server`: RestartServer in the pod, which ends
// its processes so the kubelet starts the sidecar anew) and replays steps 1
// to 4, until a pass adds nothing to the staging tree or `max_passes`
// passes ran; what each run added is recorded (PassObserver, converge.h) and
// written to `record`.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/convergence.h"
#include "core/resolve_answer.h"
#include "core/warmup_plan.h"

namespace kc::initwarm {

struct DriveOptions {
  core::ResolveUrl server;  // host and port of the server
  std::string ready_path;   // "" waits for a TCP connection instead
  std::chrono::milliseconds timeout{std::chrono::seconds(1800)};
  std::chrono::milliseconds request_timeout{std::chrono::seconds(600)};
  std::filesystem::path view;
  std::chrono::milliseconds settle{std::chrono::seconds(3)};
  std::chrono::milliseconds poll{std::chrono::seconds(1)};
  std::vector<core::WarmupCall> calls;
  std::int32_t max_passes = 0;             // 0: the plan once
  std::filesystem::path record;            // the convergence record ("" for none)
  std::function<Status()> restart_server;  // required with max_passes > 0
};

struct DriveResult {
  std::filesystem::path staging;
  std::filesystem::path detached;
  std::int64_t ready_ms = 0;
  std::int64_t calls_ms = 0;
  std::int64_t settle_ms = 0;
  std::optional<core::ConvergenceRecord> convergence;  // with max_passes > 0
};

// Progress goes to `log`, sparsely: readiness failures (the first, then
// every 30 s), one line per call (label, status, milliseconds), the view
// detached, settled. Errors: DeadlineExceeded (never ready, or `timeout`
// ran out), Unavailable naming the call that failed, FailedPrecondition or
// an I/O error from the view or the staging tree.
StatusOr<DriveResult> Drive(const DriveOptions& opts, std::ostream& log);

}  // namespace kc::initwarm
