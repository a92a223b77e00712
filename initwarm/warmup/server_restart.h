// RestartServer: end the model server of a server-form warmup pod so that
// the kubelet starts its native sidecar again, for a convergence pass in a
// fresh server process (drive.h).
//
// The pod shares its process namespace (the operator sets
// shareProcessNamespace on such pods) and every server container carries
// KC_WARMUP_SERVER=1 (core::kWarmupServerMarkerEnv) in its environment, as
// do the processes it starts. Every process of this pod's namespace whose
// /proc/<pid>/environ holds it (this process aside) gets SIGTERM; once all
// are gone (or zombies: ended) RestartServer returns. Those still there after `grace` get
// SIGKILL. The wait polls /proc every `poll`: it observes the processes'
// end, it does not stand in for it.
// Errors: FailedPrecondition when no such process is visible (is the pod's
// process namespace shared? did the template's container keep the
// variable?); PermissionDenied naming the pid when a signal is refused (the
// server runs as another uid); DeadlineExceeded when `deadline` passes
// first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "initwarm/warmup/drive_rules.h"

namespace kc::initwarm {

struct RestartOptions {
  std::filesystem::path proc = "/proc";
  std::chrono::milliseconds grace{std::chrono::seconds(30)};
  std::chrono::milliseconds poll{100};
  DriveClock::time_point deadline = DriveClock::time_point::max();
  std::string marker_value = "1";  // KC_WARMUP_SERVER=<this> marks the server
};

// The pids under `proc` whose environment holds KC_WARMUP_SERVER=<value>,
// this process aside, sorted.
std::vector<pid_t> ServerPids(const std::filesystem::path& proc, const std::string& value = "1");

Status RestartServer(const RestartOptions& opts);

}  // namespace kc::initwarm
