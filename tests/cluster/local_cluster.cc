// LocalCluster: drives tests/cluster/cluster.sh (see local_cluster.h).
#include "tests/cluster/local_cluster.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string_view>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace kc {
namespace {

#ifndef KC_CLUSTER_SCRIPT_DEFAULT
#define KC_CLUSTER_SCRIPT_DEFAULT "tests/cluster/cluster.sh"
#endif

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Tail(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  return "..." + std::string(s.substr(s.size() - n));
}

// Runs argv[0] (a path) with the given stdin, capturing stdout and stderr.
// When `inherit_stderr` is set, stderr goes to ours (for progress output).
StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   const std::string& stdin_data, bool inherit_stderr = false) {
  int in_pipe[2];
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
      pipe2(err_pipe, O_CLOEXEC) != 0) {
    return InternalError(std::string("pipe2: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  if (!inherit_stderr) posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);

  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));  // NOLINT
  cargv.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    return FailedPreconditionError("cannot run " + argv[0] + ": " + std::strerror(rc));
  }

  ProcessResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (stdin_data.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, fcntl(in_fd, F_GETFL) | O_NONBLOCK);
  }
  int out_fd = out_pipe[0];
  int err_fd = err_pipe[0];
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0 || in_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      int& fd = fds[i].fd == out_fd ? out_fd : (fds[i].fd == err_fd ? err_fd : in_fd);
      if (fd == in_fd) {
        ssize_t w = write(fd, stdin_data.data() + written, stdin_data.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = stdin_data.size();
        if (written >= stdin_data.size()) {
          close(fd);
          fd = -1;
        }
        continue;
      }
      ssize_t r = read(fd, buf, sizeof(buf));
      if (r > 0) {
        (fd == out_fd ? result.out : result.err).append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fd);
        fd = -1;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string ShellQuoteJoin(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

// Reads KEY=VALUE or `export KEY='VALUE'` lines.
std::string FindVar(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    if (line.rfind(key + "=", 0) != 0) continue;
    std::string v = line.substr(key.size() + 1);
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

std::string BuildScriptPath() {
  return (std::filesystem::path(LocalClusterScriptPath()).parent_path() / "build.sh").string();
}

bool EnvIsSet(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string_view(v) == "1";
}

// Ensures the cached binaries exist (see the header for the policy).
Status EnsureBinaries(bool with_kwok, bool with_node) {
  std::vector<std::string> check = {BuildScriptPath(), "--check", "etcd", "kubernetes"};
  if (with_kwok) check.emplace_back("kwok");
  if (with_node) check.emplace_back("kubernetes-node");
  KC_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(check, ""));
  if (r.exit_code == 0) return OkStatus();
  if (!EnvIsSet("KC_BUILD_IF_MISSING")) {
    return FailedPreconditionError(
        "the local control plane binaries are not built (" + r.out +
        "). Run tests/cluster/build.sh once (first build: ~20-25 minutes on 2 cores; "
        "later runs: seconds), or set KC_BUILD_IF_MISSING=1 to build them here.");
  }
  std::cerr << "[LocalCluster] binaries missing; running " << BuildScriptPath()
            << " (slow the first time)\n";
  std::vector<std::string> build = {BuildScriptPath(), "etcd", "kubernetes"};
  if (with_kwok) build.emplace_back("kwok");
  if (with_node) build.emplace_back("kubernetes-node");
  KC_ASSIGN_OR_RETURN(ProcessResult b, RunProcess(build, "", /*inherit_stderr=*/true));
  std::cerr << b.out;
  if (b.exit_code != 0) {
    return FailedPreconditionError("tests/cluster/build.sh failed (exit " +
                                   std::to_string(b.exit_code) + "); see its output above");
  }
  return OkStatus();
}

}  // namespace

std::string LocalClusterScriptPath() {
  const char* env = std::getenv("KC_CLUSTER_SCRIPT");
  if (env != nullptr && *env != '\0') return env;
  return KC_CLUSTER_SCRIPT_DEFAULT;
}

StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(const Options& options) {
  if (!options.kwok_stage_files.empty() && !options.with_kwok) {
    return InvalidArgumentError("LocalClusterOptions.kwok_stage_files needs with_kwok = true");
  }
  std::unique_ptr<LocalCluster> c(new LocalCluster());
  if (options.dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kc-cluster-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return InternalError("mkdtemp(" + tmpl + "): " + std::strerror(errno));
    }
    c->dir_ = tmpl;
    c->owns_dir_ = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(options.dir, ec);
    if (ec) {
      return InvalidArgumentError("LocalClusterOptions.dir " + options.dir +
                                  ": cannot create: " + ec.message());
    }
    c->dir_ = std::filesystem::absolute(options.dir).string();
  }
  c->kubeconfig_path_ = c->dir_ + "/kubeconfig";

  Status bins = EnsureBinaries(options.with_kwok, options.with_node);
  if (!bins.ok()) {
    c->stopped_ = true;
    std::error_code ec;
    if (c->owns_dir_) std::filesystem::remove_all(c->dir_, ec);  // nothing to keep yet
    return bins;
  }

  c->leave_running_ = options.leave_running;
  std::vector<std::string> up = {"up", "--timeout", std::to_string(options.ready_timeout.count())};
  if (!options.leave_running) {
    up.emplace_back("--owner-pid");
    up.push_back(std::to_string(getpid()));
  }
  if (options.with_kwok) up.emplace_back("--with-kwok");
  if (options.with_node) up.emplace_back("--with-node");
  for (const auto& f : options.kwok_stage_files) {
    up.emplace_back("--kwok-stage");
    up.push_back(f);
  }
  for (const auto& a : options.apiserver_args) {
    up.emplace_back("--apiserver-arg");
    up.push_back(a);
  }
  std::string out;
  Status s = c->RunScript(up, &out);
  if (!s.ok()) {
    c->stopped_ = true;  // cluster.sh stopped what it started; keep the logs
    return s.WithContext("LocalCluster::Start in " + c->dir_ + " (logs in " + c->dir_ + "/logs)");
  }
  std::string env_out;
  KC_RETURN_IF_ERROR(c->RunScript({"env"}, &env_out));
  c->bin_dir_ = FindVar(env_out, "KC_K8S_BIN");
  c->helm_path_ = FindVar(env_out, "KC_HELM");
  std::ifstream cluster_env(c->dir_ + "/cluster.env");
  std::stringstream ss;
  ss << cluster_env.rdbuf();
  c->server_ = FindVar(ss.str(), "KC_SERVER");
  if (c->server_.empty() || c->bin_dir_.empty()) {
    return InternalError("cluster.sh up succeeded but " + c->dir_ +
                         "/cluster.env or `cluster.sh env` lacks KC_SERVER/KC_K8S_BIN");
  }
  return c;
}

LocalCluster::~LocalCluster() {
  if (leave_running_) return;
  Status s = Stop();
  if (!s.ok()) std::cerr << "[LocalCluster] stop failed: " << s << "\n";
}

Status LocalCluster::RunScript(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv = {LocalClusterScriptPath(), "--dir", dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  KC_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, ""));
  if (out != nullptr) *out = r.out;
  if (r.exit_code != 0) {
    return UnavailableError("cluster.sh " + ShellQuoteJoin(args) + " failed (exit " +
                            std::to_string(r.exit_code) + "):\n" + Tail(r.err, 6000));
  }
  return OkStatus();
}

Status LocalCluster::StopApiServer() { return RunScript({"stop-apiserver"}, nullptr); }

Status LocalCluster::StartApiServer() { return RunScript({"start-apiserver"}, nullptr); }

Status LocalCluster::RestartApiServer() { return RunScript({"restart-apiserver"}, nullptr); }

Status LocalCluster::Compact(int64_t* revision) {
  std::string out;
  KC_RETURN_IF_ERROR(RunScript({"compact"}, &out));
  if (revision != nullptr) {
    try {
      *revision = std::stoll(out);
    } catch (const std::exception&) {
      return InternalError("cluster.sh compact printed no revision: '" + out + "'");
    }
  }
  return OkStatus();
}

Status LocalCluster::ApplyCrd(const std::string& manifest, const std::string& crd) {
  std::string out;
  KC_RETURN_IF_ERROR(Kubectl({"apply", "-f", manifest}, &out));
  return RunScript({"wait-crd", "crd/" + crd}, &out);
}

Status LocalCluster::Kubectl(const std::vector<std::string>& args, std::string* out) {
  return KubectlWithInput(args, "", out);
}

Status LocalCluster::KubectlWithInput(const std::vector<std::string>& args,
                                      const std::string& stdin_data, std::string* out) {
  std::vector<std::string> argv = {kubectl_path(), "--kubeconfig=" + kubeconfig_path_};
  argv.insert(argv.end(), args.begin(), args.end());
  KC_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, stdin_data));
  if (out != nullptr) *out = r.out;
  if (r.exit_code != 0) {
    return UnavailableError("kubectl " + ShellQuoteJoin(args) + " failed (exit " +
                            std::to_string(r.exit_code) + "): " + Tail(r.err, 4000));
  }
  return OkStatus();
}

std::vector<pid_t> LocalCluster::RecordedPids() const {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/pids", ec)) {
    if (e.path().extension() != ".pid") continue;
    std::ifstream in(e.path());
    long pid = 0;  // NOLINT(google-runtime-int)
    if (in >> pid && pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

Status LocalCluster::Stop() {
  if (stopped_) return OkStatus();
  stopped_ = true;
  Status s = RunScript({"down"}, nullptr);
  if (s.ok() && owns_dir_ && !EnvIsSet("KC_KEEP_CLUSTER_DIR")) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  return s;
}

StatusOr<LocalCluster*> SharedLocalCluster(const LocalClusterOptions& options) {
  static std::mutex mu;
  static std::unique_ptr<LocalCluster> cluster;
  static Status error;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried) {
    tried = true;
    LocalClusterOptions effective = options;
    const char* shared_dir = std::getenv("KC_TEST_CLUSTER_DIR");
    if (shared_dir != nullptr && *shared_dir != '\0') {
      effective.dir = shared_dir;
      effective.leave_running = true;
    }
    auto started = LocalCluster::Start(effective);
    if (started.ok()) {
      cluster = std::move(started).value();
    } else {
      error = started.status();
    }
  }
  if (cluster == nullptr) return error;
  return cluster.get();
}

}  // namespace kc
