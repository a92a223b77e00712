// OperatorProcess: the real kernelcache-operator binary as a child process,
// for the integration tests (kill/restart and two-replica scenarios need a
// real process). stdout/stderr go to a log file; the destructor kills it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace kc::optest {

class OperatorProcess {
 public:
  OperatorProcess(std::string binary, std::string log_path)
      : binary_(std::move(binary)), log_path_(std::move(log_path)) {}
  ~OperatorProcess() { Kill(9); }
  OperatorProcess(const OperatorProcess&) = delete;
  OperatorProcess& operator=(const OperatorProcess&) = delete;

  Status Start(const std::vector<std::string>& args);
  // Sends `sig` and waits for the exit; returns the exit status (as from
  // waitpid) or -1 when not running.
  int Kill(int sig);
  // Waits up to `timeout_ms` for the process to exit by itself; true when it did.
  bool WaitExit(int timeout_ms, int* wait_status);
  bool Running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  std::string Log() const;

 private:
  std::string binary_;
  std::string log_path_;
  pid_t pid_ = -1;
};

// A TCP port free on 127.0.0.1 at the time of the call.
int FreePort();

}  // namespace kc::optest
