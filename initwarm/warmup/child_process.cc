#include "initwarm/warmup/child_process.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace kc::initwarm {
namespace {

std::atomic<pid_t> g_group{0};

void Forward(int sig) {
  const pid_t group = g_group.load();
  if (group > 0) ::kill(-group, sig);
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  return "ended with status " + std::to_string(status);
}

// Reaps every child of this process (the run's leftovers re-parented here).
void ReapAll() {
  while (true) {
    const pid_t p = ::waitpid(-1, nullptr, 0);
    if (p > 0) continue;
    if (p < 0 && errno == EINTR) continue;
    return;  // ECHILD: none left
  }
}

}  // namespace

StatusOr<ChildExit> RunToCompletion(const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgumentError("no command to run");
  (void)::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return InternalError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    ::execvp(args[0], args.data());
    const std::string msg = "exec " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with the signals below
  g_group.store(pid);
  struct sigaction sa {};
  sa.sa_handler = Forward;
  ::sigemptyset(&sa.sa_mask);
  struct sigaction old[3];
  const int sigs[3] = {SIGTERM, SIGINT, SIGHUP};
  for (int i = 0; i < 3; ++i) ::sigaction(sigs[i], &sa, &old[i]);
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid, &status, 0);
  } while (got < 0 && errno == EINTR);
  ::kill(-pid, SIGKILL);  // what is left of the run's group
  ReapAll();
  g_group.store(0);
  for (int i = 0; i < 3; ++i) ::sigaction(sigs[i], &old[i], nullptr);
  if (got < 0) return InternalError(std::string("waitpid: ") + std::strerror(errno));
  ChildExit e;
  e.how = Describe(status);
  e.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return e;
}

}  // namespace kc::initwarm
