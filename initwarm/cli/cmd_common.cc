#include "initwarm/cli/cmd_common.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/exit_codes.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/fs/fsutil.h"

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

std::string CommandUsage(const std::string& command) {
  return "usage: initwarm " + command + " [flags]";
}

void AddRootFlag(FlagSet* f, std::string* root) {
  *root = std::string(core::kDefaultRoot);
  f->String(core::job_flag::kRoot, root, "the cache volume's mount path").Env("KC_CACHE_ROOT");
}

void AddOwnerFlag(FlagSet* f, OwnerFlags* owner) {
  f->String(core::job_flag::kJobUid, &owner->job_uid,
            "owner id of this warmup: the Job uid (names the staging directory and owns the "
            "lock; falls back to $POD_UID)")
      .Env("KC_JOB_UID");
  f->String(core::job_flag::kStagingId, &owner->staging_id, "alias of --job-uid");
}

std::string ResolveOwner(const OwnerFlags& owner, bool allow_random) {
  if (!owner.staging_id.empty()) return owner.staging_id;
  if (!owner.job_uid.empty()) return owner.job_uid;
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

void AddTerminationLogFlag(FlagSet* f, std::string* path) {
  *path = kDefaultTerminationLog;
  f->String(core::job_flag::kTerminationLog, path,
            "file that receives the one-line JSON result (the container termination message; "
            "written when given, or when the default exists)")
      .Env("KC_TERMINATION_LOG");
}

void WriteTerminationMessage(const FlagSet& f, const std::string& path,
                             const std::string& message) {
  if (path.empty()) return;
  const char* env = std::getenv("KC_TERMINATION_LOG");
  const bool explicit_path = f.IsSet("termination-log") || (env != nullptr && *env != '\0');
  if (!explicit_path && !Exists(path)) return;
  Status s = WriteNewFile(path, message + "\n");
  if (!s.ok()) std::cerr << "initwarm: could not write termination log: " << s << "\n";
}

int ExitCodeOf(const Status& s, std::span<const std::pair<StatusCode, int>> codes) {
  for (const auto& [code, exit_code] : codes) {
    if (s.code() == code) return exit_code;
  }
  return core::kExitError;
}

void PrintError(const std::string& cmd, const Status& s) {
  std::cerr << "initwarm " << cmd << ": " << s.ToString() << "\n";
}

int ParseOrExit(const std::string& cmd, FlagSet* f, const std::vector<std::string>& args,
                const std::function<int(const Status&)>& bad_value) {
  StatusOr<std::vector<FlagSet::Arg>> given = f->Split(args);
  if (f->help_requested()) {
    std::cout << f->Help();
    return core::kExitOk;
  }
  if (!given.ok()) {
    std::cerr << "initwarm " << cmd << ": " << given.status().message() << "\n";
    return core::kExitUsage;
  }
  Status values = f->ApplyEnvironment(*given);
  if (values.ok()) values = f->Apply(*given);
  if (!values.ok()) return bad_value(values);
  return -1;
}

int ParseOrExit(const std::string& cmd, FlagSet* f, const std::vector<std::string>& args) {
  return ParseOrExit(cmd, f, args, [&cmd](const Status& s) {
    std::cerr << "initwarm " << cmd << ": " << s.message() << "\n";
    return core::kExitUsage;
  });
}

}  // namespace kc::initwarm
