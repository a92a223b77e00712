// Wait: the model pod's init container. Resolve the pod's fingerprint, wait
// for its cache to be READY, validate it, and build the cache view.
//
// Each round: ask the Resolver (operator endpoint) for this node's
// fingerprint and state; once, where a GPU is visible (Prober), compare the
// probed node facts with the resolver's and refuse on disagreement
// (FailedPrecondition naming both). When v1/<fp>/READY exists, validate up
// to `verify` (Copy mode: copy the listed files into the local emptyDir
// first and validate the copy) and point the view at the cache (Shared: a symlink to a layered
// tree in the local directory whose files link into the volume, so new
// entries land locally, initwarm/cache/layered_view.h; SharedReadWrite is deprecated,
// logs a warning and behaves as Shared; Copy: a symlink to the local copy;
// either way Triton's absolute paths under the view resolve). A cache
// is always validated up to level 2 (Fingerprint), also under Manifest.
// When the operator gave a manifestDigest, the cache's (sha256 of
// manifest.json, which READY holds) must equal it: a cache rewritten
// consistently after sealing is refused. A READY whose digest differs is
// first given `digest_grace_s` (the operator records a fresh re-warm's
// digest moments after it is sealed), then refused.
// A cache that fails validation is quarantined (when the volume is
// writable) and the wait ends at once (DataLoss; the report lists the
// quarantine, so the operator re-warms it; a restarted gate then waits for
// that). Polls back off exponentially (NextPollDelayMs), because network
// filesystems give no inotify. A resolver state Failed ends the wait at
// once, and so does a final answer (invalid spec, node not selected or
// without a fingerprint: NotFound). An answer with startCold (the
// fingerprint's warmup cannot be scheduled: a full GPU pool) ends the wait
// at once under StartCold (reason WarmupUnschedulable, logged) when no usable
// cache is on the volume; under Fail the pod keeps waiting, since the
// warmup may still run. When the wait ends without a cache
// (timeout, failure, quarantine, final answer): StartCold points the view
// at an empty local directory and succeeds (Cold); Fail returns the
// error (DeadlineExceeded on timeout or failed warmup). Every
// `log_every_s` one human line says why it is waiting. `report` (when not
// null) receives the gate report (core/gate_report.h) on every outcome.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "base/status.h"
#include "core/consume.h"
#include "core/gate_report.h"
#include "core/layout.h"
#include "core/validate.h"
#include "initwarm/cache/verify.h"
#include "initwarm/gpu/probe.h"
#include "initwarm/net/resolve_client.h"

namespace kc::initwarm {

struct WaitOptions {
  std::filesystem::path root = std::string(core::kDefaultRoot);
  std::filesystem::path view = std::string(core::kDefaultView);
  // Local (emptyDir) directory for Copy mode copies and the cold view;
  // default: <view's parent>/local.
  std::filesystem::path local_dir;
  // The fixed view path caches were written under (Triton __grp__ checks).
  std::string view_prefix = std::string(core::kDefaultView);
  std::string ns, kernelcache, node;
  std::string fingerprint;  // when set, the resolver is not needed
  core::ConsumeMode mode = core::kDefaultConsumeMode;
  core::Level verify = core::kDefaultVerifyLevel;
  std::int64_t timeout_s = core::kDefaultWaitTimeoutSeconds;
  bool start_cold_on_timeout = false;
  std::int64_t poll_initial_ms = 1000;
  std::int64_t poll_max_ms = 15000;
  std::int64_t log_every_s = 10;
  bool quarantine = true;
  int threads = 0;
  std::int64_t digest_grace_s = 30;
};

struct WaitDeps {
  Resolver* resolver = nullptr;                 // null: opts.fingerprint must be set
  Prober* prober = nullptr;                     // null: no local cross-check
  CubinLoadFn load_cubin;                       // LoadTest
  PackageCheckFn check_packages;                // LoadTest: the .pt2 rung
  std::function<std::int64_t()> now_ms;         // monotonic; default steady clock
  std::function<void(std::int64_t)> sleep_ms;   // default: real sleep
  std::function<void(const std::string&)> log;  // default: stderr
};

struct WaitResult {
  core::GateOutcome outcome = core::GateOutcome::kWarm;  // Warm or Cold
  std::string fingerprint;
  std::string reason;            // why cold, or the validation summary
  std::filesystem::path target;  // what the view points at
  std::int64_t waited_ms = 0;
};

StatusOr<WaitResult> Wait(const WaitOptions& opts, const WaitDeps& deps,
                          core::GateReport* report = nullptr);

// Capped exponential backoff: initial * 2^attempt, at most max. Pure.
std::int64_t NextPollDelayMs(int attempt, std::int64_t initial_ms, std::int64_t max_ms);

}  // namespace kc::initwarm
