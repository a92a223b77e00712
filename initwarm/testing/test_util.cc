#include "initwarm/testing/test_util.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/layout.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/cache/seal.h"
#include "testing/objects.h"

namespace kc::initwarm::testing {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t != nullptr && *t != '\0' ? t : "/tmp") + "/kc-iw-XXXXXX";
  char* d = ::mkdtemp(tmpl.data());
  if (d == nullptr) std::abort();
  path_ = d;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

SmallVolume::SmallVolume(fs::path path, const char* options) : path_(std::move(path)) {
  fs::create_directories(path_);
  mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, options) == 0;
}

SmallVolume::~SmallVolume() {
  if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
}

void WriteFile(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Bytes(std::uint64_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::uint64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = static_cast<char>(x & 0xff);
  }
  return s;
}

core::NodeFacts H200Facts() { return testutil::H200Facts(); }

SealOptions H200SealOptions(const fs::path& root, const std::string& owner) {
  SealOptions s;
  s.root = root;
  s.owner = owner;
  s.node = H200Facts();
  s.runtime = TestRuntime();
  return s;
}

core::RuntimeFacts TestRuntime() {
  core::RuntimeFacts r;
  r.image = "registry.example/llama@sha256:0123";
  r.runtime = {{"pytorch", "2.11.0"}, {"triton", "3.6.0"}};
  return r;
}

std::vector<std::string> WriteTritonCache(const fs::path& dir, int kernels, int arch,
                                          const std::string& view) {
  std::vector<std::string> out;
  for (int k = 0; k < kernels; ++k) {
    std::string hash = "H" + std::to_string(1000 + k) + "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    std::string name = "kernel_" + std::to_string(k);
    std::string base = "triton/" + hash + "/";
    std::string meta = R"({"hash":")" + hash;
    meta += R"(","target":{"backend":"cuda","arch":)" + std::to_string(arch);
    meta += R"(,"warp_size":32},"num_warps":4,"name":")" + name;
    meta += R"(","triton_version":"3.6.0"})";
    WriteFile(dir / (base + name + ".json"), meta);
    WriteFile(dir / (base + name + ".cubin"), Bytes(2000 + 97 * k, k));
    WriteFile(dir / (base + name + ".ptx"), "// ptx " + name + "\n" + Bytes(300, k + 7));
    std::string grp = R"({"child_paths":{)";
    for (const std::string ext : {".json", ".cubin", ".ptx"}) {
      if (ext != ".json") grp += ",";
      grp += "\"";
      grp += name;
      grp += ext;
      grp += "\":\"";
      grp += view;
      grp += "/";
      grp += base;
      grp += name;
      grp += ext;
      grp += "\"";
    }
    grp += "}}";
    std::string grp_name = base;
    grp_name += "__grp__";
    grp_name += name;
    grp_name += ".json";
    WriteFile(dir / grp_name, grp);
    for (const std::string& f :
         {name + ".json", name + ".cubin", name + ".ptx", "__grp__" + name + ".json"}) {
      out.push_back(base + f);
    }
  }
  WriteFile(dir / "inductor/fxgraph/ab/fabc", Bytes(5000, 99));
  out.emplace_back("inductor/fxgraph/ab/fabc");
  return out;
}

StatusOr<std::string> SealTestCache(const fs::path& root, const std::string& fp,
                                    const std::string& owner,
                                    const std::function<void(const fs::path&)>& fill,
                                    bool replace) {
  PrepareOptions p;
  p.root = root;
  p.fingerprint = fp;
  p.owner = owner;
  KC_ASSIGN_OR_RETURN(PrepareResult prepared, Prepare(p));
  fill(prepared.staging);
  SealOptions s = H200SealOptions(root, owner);
  s.replace = replace;
  KC_ASSIGN_OR_RETURN(SealResult sealed, Seal(s));
  return sealed.manifest_digest;
}

int RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               std::string* output, long* peak_kib) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  if (peak_kib != nullptr) *peak_kib = usage.ru_maxrss;
  if (output != nullptr) *output = out;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

StatusOr<fs::path> PublishH200Cache(const fs::path& root,
                                    const std::function<void(const fs::path&)>& fill,
                                    const std::string& owner) {
  const std::string fp = core::ComputeFingerprint(H200Facts(), TestRuntime()).id;
  PrepareOptions p;
  p.root = root;
  p.fingerprint = fp;
  p.owner = owner;
  KC_ASSIGN_OR_RETURN(PrepareResult prepared, Prepare(p));
  fill(prepared.staging);
  KC_RETURN_IF_ERROR(Seal(H200SealOptions(root, owner)).status());
  return core::Layout(root).Published(fp);
}

}  // namespace kc::initwarm::testing
