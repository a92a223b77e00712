// RunToCompletion: run a command as a fresh child process and wait until it
// and everything it started are gone.
//
// The child runs `argv` (PATH searched) with this process's environment,
// stdin, stdout and stderr, in a process group of its own. This process is
// made a child subreaper (PR_SET_CHILD_SUBREAPER), so processes the child
// leaves behind (a compile worker pool, a daemonised helper) are
// re-parented here instead of to init. When the child exits, whatever is
// left of its process group is killed (SIGKILL) and every descendant is
// reaped before RunToCompletion returns: nothing of the run can still be
// writing when the caller looks at what it wrote. A descendant that left
// the group (setsid) and never exits keeps RunToCompletion waiting; the
// Job's activeDeadlineSeconds bounds that.
//
// SIGTERM, SIGINT and SIGHUP received while the child runs are forwarded
// to its process group (as PID 1 of a container, this process would
// otherwise ignore the kubelet's SIGTERM).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace kc::initwarm {

struct ChildExit {
  int exit_code = 0;  // the exit status, or 128 + the signal that ended it
  std::string how;    // "exited with 0" | "killed by signal 9 (Killed)"
};

// InvalidArgument for an empty argv; Internal when fork fails. A command
// that cannot be executed ends as exit code 127 ("exec <argv0>: <error>"
// on stderr), as a shell reports it.
StatusOr<ChildExit> RunToCompletion(const std::vector<std::string>& argv);

}  // namespace kc::initwarm
