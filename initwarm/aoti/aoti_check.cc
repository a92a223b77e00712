#include "initwarm/aoti/aoti_check.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
constexpr char kHelper[] = "kc-aoti-check";

std::string FindHelper() {
  if (const char* env = std::getenv("KC_AOTI_CHECK"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = self.parent_path() / kHelper;
    if (fs::exists(beside, ec)) return beside.string();
    fs::path in_aoti = self.parent_path() / "aoti" / kHelper;  // build tree
    if (fs::exists(in_aoti, ec)) return in_aoti.string();
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string p(path);
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      fs::path cand = fs::path(p.substr(start, end - start)) / kHelper;
      if (end > start && access(cand.c_str(), X_OK) == 0) return cand.string();
      start = end + 1;
    }
  }
  return {};
}

}  // namespace

StatusOr<AotiCheckResult> LoadAndRunAotiPackage(const std::string& package_path,
                                                const AotiCheckOptions& options) {
  std::string helper = FindHelper();
  if (helper.empty()) {
    return UnavailableError(std::string("the AOTInductor check needs the ") + kHelper +
                            " helper (built where libtorch is found) beside initwarm, on PATH, "
                            "or named by $KC_AOTI_CHECK");
  }
  std::vector<std::string> args = {
      helper,         "--package",       package_path, "--runs", std::to_string(options.runs),
      "--model-name", options.model_name};
  if (!options.inputs_spec.empty()) {
    args.emplace_back("--inputs");
    args.push_back(options.inputs_spec);
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::array<int, 2> fds{};
  if (pipe(fds.data()) != 0) return InternalError("pipe: " + std::string(strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid = 0;
  // A check writes nothing: no CUDA ComputeCache entries into the cache view
  // (on the H200 a JIT entry written by a run in Shared mode made the
  // sealed cache fail its own checksum level afterwards).
  std::vector<std::string> env_store;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (kv.starts_with("CUDA_CACHE_PATH=") || kv.starts_with("CUDA_CACHE_DISABLE=")) continue;
    env_store.emplace_back(kv);
  }
  env_store.emplace_back("CUDA_CACHE_DISABLE=1");
  std::vector<char*> envp;
  envp.reserve(env_store.size() + 1);
  for (auto& kv : env_store) envp.push_back(kv.data());
  envp.push_back(nullptr);
  int rc = posix_spawn(&pid, helper.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return UnavailableError("cannot start " + helper + ": " + strerror(rc));
  }
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_seconds);
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    std::array<char, 4096> buf{};
    ssize_t got = read(fds[0], buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    out.append(buf.data(), static_cast<size_t>(got));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return DeadlineExceededError("AOTInductor package " + package_path +
                                 " did not load and run within " +
                                 std::to_string(options.timeout_seconds) + " s");
  }
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    std::string how = WIFSIGNALED(wstatus) ? "killed by signal " + std::to_string(WTERMSIG(wstatus))
                                           : "exit " + std::to_string(WEXITSTATUS(wstatus));
    return FailedPreconditionError("AOTInductor package " + package_path + ": " + kHelper + " " +
                                   how + " without an answer (output: " + out.substr(0, 300) + ")");
  }
  if (!j.value("ok", false)) {
    return FailedPreconditionError(
        "AOTInductor package " + package_path +
        " failed to load or run: " + j.value("error", "no reason given"));
  }
  AotiCheckResult r;
  r.load_ms = j.value("load_ms", 0.0);
  r.first_run_ms = j.value("first_run_ms", 0.0);
  r.steady_run_ms = j.value("steady_run_ms", 0.0);
  r.json = j.dump();
  return r;
}

}  // namespace kc::initwarm
