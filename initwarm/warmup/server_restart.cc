#include "initwarm/warmup/server_restart.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "core/spec_validation.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {
namespace fs = std::filesystem;

namespace {

bool HasMarker(const std::string& environ, const std::string& value) {
  const std::string marker = std::string(core::kWarmupServerMarkerEnv) + "=" + value;
  std::size_t start = 0;
  while (start < environ.size()) {
    std::size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(start, end - start, marker) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Running, or anything but gone or a zombie (which has ended; its parent
// outside this container reaps it).
bool Alive(const fs::path& proc, pid_t pid) {
  auto stat = ReadFileNoFollow(proc / std::to_string(pid) / "stat", 4096);
  if (!stat.ok()) return false;
  const std::size_t paren = stat->rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat->size()) return false;
  const char state = (*stat)[paren + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace

std::vector<pid_t> ServerPids(const fs::path& proc, const std::string& value) {
  std::vector<pid_t> out;
  std::error_code ec;
  const pid_t self = ::getpid();
  for (fs::directory_iterator it(proc, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == self) continue;
    // Another uid's environ is unreadable: not ours to restart.
    auto env = ReadFileNoFollow(it->path() / "environ", 1 << 20);
    if (env.ok() && HasMarker(*env, value)) out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status RestartServer(const RestartOptions& o) {
  std::vector<pid_t> pids = ServerPids(o.proc, o.marker_value);
  if (pids.empty()) {
    return FailedPreconditionError(
        "no server process to restart for the next convergence pass: none visible with " +
        std::string(core::kWarmupServerMarkerEnv) +
        "=1 (the warmup pod must share its process namespace; set "
        "spec.warmup.convergence.maxPasses: 0 to run the plan once)");
  }
  for (pid_t pid : pids) {
    if (::kill(pid, SIGTERM) != 0 && errno != ESRCH) {
      return PermissionDeniedError("cannot signal the server process " + std::to_string(pid) +
                                   " (" + std::strerror(errno) +
                                   "): it runs as another uid than the driver; remove "
                                   "runAsUser from the template's container or set "
                                   "spec.warmup.convergence.maxPasses: 0");
    }
  }
  const auto killed_at = DriveClock::now() + o.grace;
  bool killed = false;
  while (true) {
    pids.erase(std::remove_if(pids.begin(), pids.end(), [&](pid_t p) { return !Alive(o.proc, p); }),
               pids.end());
    if (pids.empty()) return OkStatus();
    const auto now = DriveClock::now();
    if (now >= o.deadline) {
      return DeadlineExceededError("the server process " + std::to_string(pids[0]) +
                                   " did not end within --timeout after SIGTERM");
    }
    if (!killed && now >= killed_at) {
      for (pid_t pid : pids) ::kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(o.poll);
  }
}

}  // namespace kc::initwarm
