// Helpers shared by the cmd_*.cc command shells: common flags, owner id,
// facts arguments, termination message. Shells only: parse, call, print.
// Every command declares its flags with the one flag layer (base/flags.h),
// bound to its own variables.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "core/fingerprint.h"

namespace kc::initwarm {

// A command's FlagSet: "usage: initwarm <command> [flags]" over `summary`.
std::string CommandUsage(const std::string& command);

// --root, with env KC_CACHE_ROOT; `root` starts as core::kDefaultRoot.
void AddRootFlag(FlagSet* f, std::string* root);

// `path` made absolute against the working directory ("" stays "": no path).
// Views are symlinks to directories under the root, so both must be absolute.
std::string AbsolutePath(const std::string& path);

// --job-uid (env KC_JOB_UID) and its alias --staging-id.
struct OwnerFlags {
  std::string job_uid;
  std::string staging_id;
};
void AddOwnerFlag(FlagSet* f, OwnerFlags* owner);
// The owner id: --staging-id, --job-uid, $KC_JOB_UID, $POD_UID, else a
// random id when `allow_random`, else empty.
std::string ResolveOwner(const OwnerFlags& owner, bool allow_random);

// A facts argument: inline JSON (starting with '{') or a file path; empty
// gives nullopt.
StatusOr<std::optional<core::NodeFacts>> NodeFactsArg(const std::string& value);
StatusOr<std::optional<core::RuntimeFacts>> RuntimeFactsArg(const std::string& value);

// --termination-log, with env KC_TERMINATION_LOG; `path` starts as
// /dev/termination-log.
void AddTerminationLogFlag(FlagSet* f, std::string* path);
// Writes `message` to the termination log `path`: always when the path was
// given explicitly (flag or environment), else only when the default path
// already exists (Kubernetes creates it). Failures are reported on stderr
// and otherwise ignored.
void WriteTerminationMessage(const FlagSet& f, const std::string& path, const std::string& message);

// The exit code (core/exit_codes.h) `codes` gives the code of `s`, else
// core::kExitError.
int ExitCodeOf(const Status& s, std::span<const std::pair<StatusCode, int>> codes);

// Prints "initwarm <cmd>: <status>" to stderr.
void PrintError(const std::string& cmd, const Status& s);

// Parses args and handles --help (help on stdout, exit 0) and bad flags
// ("initwarm <cmd>: <message>" on stderr, exit 2). Returns -1 to continue,
// or the exit code to return.
int ParseOrExit(const std::string& cmd, FlagSet* f, const std::vector<std::string>& args);
// The same, but a bad value (not a bad name or form) goes to `bad_value`,
// whose result is returned (seal reports it as its JSON result).
int ParseOrExit(const std::string& cmd, FlagSet* f, const std::vector<std::string>& args,
                const std::function<int(const Status&)>& bad_value);

}  // namespace kc::initwarm
