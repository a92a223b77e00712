// Helpers shared by the cmd_*.cc command shells: common flags, owner id,
// facts arguments, termination message. Shells only: parse, call, print.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "core/fingerprint.h"
#include "initwarm/flags.h"

namespace kc::initwarm {

// --root, with env KC_CACHE_ROOT.
void AddRootFlag(Flags* f);

// `path` made absolute against the working directory ("" stays "": no path).
// Views are symlinks to directories under the root, so both must be absolute.
std::string AbsolutePath(const std::string& path);
// --job-uid, with env KC_JOB_UID (else POD_UID).
void AddOwnerFlag(Flags* f);
// The owner id: --job-uid, $KC_JOB_UID, $POD_UID, else a random id when
// `allow_random`, else empty.
std::string ResolveOwner(const Flags& f, bool allow_random);

// A facts argument: inline JSON (starting with '{') or a file path; empty
// gives nullopt.
StatusOr<std::optional<core::NodeFacts>> NodeFactsArg(const std::string& value);
StatusOr<std::optional<core::RuntimeFacts>> RuntimeFactsArg(const std::string& value);

// Writes `message` to the termination log: always when the path was given
// explicitly, else only when the default path already exists (Kubernetes
// creates it). Failures are reported on stderr and otherwise ignored.
void WriteTerminationMessage(const Flags& f, const std::string& message);
void AddTerminationLogFlag(Flags* f);

// Prints "initwarm <cmd>: <status>" to stderr.
void PrintError(const std::string& cmd, const Status& s);

// Parses args and handles --help/usage errors. Returns -1 to continue, or
// the exit code to return.
int ParseOrExit(Flags* f, const std::vector<std::string>& args);

}  // namespace kc::initwarm
