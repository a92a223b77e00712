#include "initwarm/cmd_common.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/exit_codes.h"
#include "initwarm/fsutil.h"

namespace kc::initwarm {

namespace {
constexpr const char* kDefaultTerminationLog = "/dev/termination-log";

StatusOr<std::string> ArgText(const std::string& value) {
  if (!value.empty() && value.front() == '{') return value;
  return ReadFileToString(value, 1 << 20);
}
}  // namespace

std::string AbsolutePath(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

void AddRootFlag(Flags* f) {
  f->String("root", std::string(core::kDefaultRoot), "the cache volume's mount path",
            "KC_CACHE_ROOT");
}

void AddOwnerFlag(Flags* f) {
  f->String("job-uid", "",
            "owner id of this warmup: the Job uid (names the staging directory and owns the "
            "lock; falls back to $POD_UID)",
            "KC_JOB_UID");
  f->String("staging-id", "", "alias of --job-uid");
}

std::string ResolveOwner(const Flags& f, bool allow_random) {
  if (f.IsSet("staging-id") && !f.Get("staging-id").empty()) return f.Get("staging-id");
  std::string v = f.Get("job-uid");
  if (!v.empty()) return v;
  if (const char* p = std::getenv("POD_UID"); p != nullptr && *p != '\0') return p;
  return allow_random ? "local-" + RandomHex() : "";
}

StatusOr<std::optional<core::NodeFacts>> NodeFactsArg(const std::string& value) {
  if (value.empty()) return std::optional<core::NodeFacts>();
  KC_ASSIGN_OR_RETURN(std::string text, ArgText(value));
  auto n = core::ParseNodeFacts(text);
  if (!n.ok()) return n.status().WithContext("--node-facts");
  return std::optional<core::NodeFacts>(*n);
}

StatusOr<std::optional<core::RuntimeFacts>> RuntimeFactsArg(const std::string& value) {
  if (value.empty()) return std::optional<core::RuntimeFacts>();
  KC_ASSIGN_OR_RETURN(std::string text, ArgText(value));
  auto r = core::ParseRuntimeFacts(text);
  if (!r.ok()) return r.status().WithContext("--runtime-facts");
  return std::optional<core::RuntimeFacts>(*r);
}

void AddTerminationLogFlag(Flags* f) {
  f->String("termination-log", kDefaultTerminationLog,
            "file that receives the one-line JSON result (the container termination message; "
            "written when given, or when the default exists)",
            "KC_TERMINATION_LOG");
}

void WriteTerminationMessage(const Flags& f, const std::string& message) {
  const std::string& path = f.Get("termination-log");
  if (path.empty()) return;
  const char* env = std::getenv("KC_TERMINATION_LOG");
  const bool explicit_path = f.IsSet("termination-log") || (env != nullptr && *env != '\0');
  if (!explicit_path && !Exists(path)) return;
  Status s = WriteNewFile(path, message + "\n");
  if (!s.ok()) std::cerr << "initwarm: could not write termination log: " << s << "\n";
}

void PrintError(const std::string& cmd, const Status& s) {
  std::cerr << "initwarm " << cmd << ": " << s.ToString() << "\n";
}

int ParseOrExit(Flags* f, const std::vector<std::string>& args) {
  Status s = f->Parse(args);
  if (f->help_requested()) {
    std::cout << f->Help();
    return kExitOk;
  }
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return kExitUsage;
  }
  return -1;
}

}  // namespace kc::initwarm
