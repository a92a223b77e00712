// `initwarm drive`: warm a server warmup's own server with the request plan,
// then seal what it compiled.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "core/exit_codes.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "core/warmup_plan.h"
#include "initwarm/cache/seal.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/cli/seal_flags.h"
#include "initwarm/warmup/drive.h"
#include "initwarm/warmup/drive_rules.h"
#include "initwarm/warmup/server_restart.h"

namespace kc::initwarm {
namespace {

constexpr char kDriveHelp[] =
    "The main container of a server warmup pod, whose model server runs beside it as a "
    "native sidecar with its cache environment pointing into the view. Waits until the "
    "server answers on the loopback (a 2xx from GET --ready-path, or a TCP connection "
    "without it; one poll a second), sends the request plan of env KC_WARMUP_REQUESTS (a "
    "JSON array of {method, path, headers, body, label}) in order, each bounded by "
    "--request-timeout, then points the view at an empty <dirname of --view>/detached so "
    "what the server writes afterwards stays out of the staging directory, waits until the "
    "staging tree is settled (the same files, sizes and times at two looks --settle apart) "
    "and runs the seal command after \"--\" in this process. --timeout bounds everything "
    "before the seal. With --max-passes, it then points the view at the staging directory "
    "again, ends the server's processes (those with KC_WARMUP_SERVER=1 in their environment; "
    "the pod shares its process namespace) so the kubelet restarts it, and replays the plan, "
    "until a pass adds nothing or --max-passes passes ran, writing what each run added to "
    "--convergence-record.\n\n"
    "usage: initwarm drive --port=8000 [flags] -- seal --root=... --fingerprint=... "
    "--staging-id=... [seal flags]\n\n"
    "exit codes: 13 the drive failed: the server never became ready within --timeout, a "
    "request failed or answered non-2xx, or the staging tree never settled (nothing "
    "published; the seal's failure JSON, its message starting \"drive: \", on stdout and in "
    "the termination log); 2 bad flags, a bad KC_WARMUP_REQUESTS, or no \"-- seal ...\" "
    "(the same JSON); after the drive, the seal's own: 0 published, 5, 6, 7, 8, 12, 1 (see "
    "initwarm seal --help).";

struct DriveFlags {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string ready_path;
  std::chrono::seconds timeout{1800};
  std::chrono::seconds request_timeout{600};
  std::string view = std::string(core::kDefaultView);
  std::chrono::seconds settle{3};
  std::string termination_log;
  int max_passes = 0;
  std::string convergence_record = std::string(core::kDefaultConvergenceRecord);
};

void AddDriveFlags(FlagSet* f, DriveFlags* flags) {
  f->String(core::drive_flag::kHost, &flags->host, "the server's address (its pod's loopback)");
  f->Int(core::drive_flag::kPort, &flags->port, 1, 65535, "the server's port (required)");
  f->String(core::drive_flag::kReadyPath, &flags->ready_path,
            "ready when GET of this path answers 2xx (\"\": when a TCP connection opens)");
  f->Duration(core::drive_flag::kTimeout, &flags->timeout, kInitwarmDurations,
              "bounds the wait for readiness, every request and the settle together");
  f->Duration(core::drive_flag::kRequestTimeout, &flags->request_timeout, kInitwarmDurations,
              "bounds one request of the plan");
  f->String(core::drive_flag::kView, &flags->view,
            "the view symlink the server's cache environment points into (prepare made it)");
  f->Duration(core::drive_flag::kSettle, &flags->settle, kInitwarmDurations,
              "the staging tree is settled when two looks this far apart are the same");
  AddTerminationLogFlag(f, &flags->termination_log);
  f->Int(core::drive_flag::kMaxPasses, &flags->max_passes, 0, core::kMaxMaxPasses,
         "convergence passes: restart the server and replay the plan until a pass adds nothing "
         "(0: the plan once)");
  f->String(core::drive_flag::kConvergenceRecord, &flags->convergence_record,
            "with --max-passes: where the convergence record is written (pass the same path "
            "to seal)");
}

// The options of the drive, or InvalidArgument naming the flag or variable.
StatusOr<DriveOptions> DecodeDriveFlags(const DriveFlags& flags) {
  if (flags.port == 0) return InvalidArgumentError("--port: required (the server's port)");
  if (!flags.ready_path.empty() && flags.ready_path[0] != '/') {
    return InvalidArgumentError("--ready-path: must start with '/'");
  }
  if (flags.view.empty()) return InvalidArgumentError("--view: required");
  const char* plan = std::getenv(std::string(core::kWarmupRequestsEnv).c_str());
  if (plan == nullptr || *plan == '\0') {
    return InvalidArgumentError(std::string(core::kWarmupRequestsEnv) +
                                ": not set (the request plan, a JSON array)");
  }
  KC_ASSIGN_OR_RETURN(std::vector<core::WarmupCall> calls, core::ParseWarmupCalls(plan));
  DriveOptions o;
  o.server = core::ResolveUrl{flags.host, std::to_string(flags.port), ""};
  o.ready_path = flags.ready_path;
  o.timeout = flags.timeout;
  o.request_timeout = flags.request_timeout;
  o.view = AbsolutePath(flags.view);
  o.settle = flags.settle;
  o.calls = std::move(calls);
  o.max_passes = flags.max_passes;
  if (o.max_passes > 0) {
    o.record = AbsolutePath(flags.convergence_record);
    o.restart_server = [deadline = DriveClock::now() + flags.timeout] {
      RestartOptions r;
      r.deadline = deadline;
      return RestartServer(r);
    };
  }
  return o;
}

// The seal command after "--", checked before the drive starts: a seal
// that cannot run should not wait half an hour for the server.
Status CheckSealArgs(const std::vector<std::string>& seal_args, SealFlags* seal_flags) {
  FlagSet seal(CommandUsage("seal"));
  AddSealFlags(&seal, seal_flags);
  KC_RETURN_IF_ERROR(seal.Parse(seal_args).WithContext("-- seal"));
  return DecodeSealFlags(*seal_flags).status().WithContext("-- seal");
}

}  // namespace

int RunDrive(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("drive"), kDriveHelp);
  DriveFlags flags;
  AddDriveFlags(&f, &flags);
  SealFlags seal_flags;
  auto fail = [&](const Status& s, int code) {
    const Status drive_failed(s.code(), "drive: " + s.message());
    PrintError("drive", s);
    const std::string json = SealFailureJson(seal_flags.fingerprint, drive_failed);
    std::cout << json << "\n";
    WriteTerminationMessage(f, flags.termination_log, json);
    return code;
  };
  const std::vector<std::string> own(args.begin(), std::find(args.begin(), args.end(), "--"));
  if (int rc =
          ParseOrExit("drive", &f, own, [&](const Status& s) { return fail(s, core::kExitUsage); });
      rc >= 0) {
    return rc;
  }
  auto command = SplitDriveArgs(args);
  if (!command.ok()) return fail(command.status(), core::kExitUsage);
  if (Status s = CheckSealArgs(command->seal, &seal_flags); !s.ok()) {
    return fail(s, core::kExitUsage);
  }
  auto options = DecodeDriveFlags(flags);
  if (!options.ok()) return fail(options.status(), core::kExitUsage);
  auto driven = Drive(*options, std::cerr);
  if (!driven.ok()) return fail(driven.status(), core::kExitDriveFailed);
  return RunSeal(command->seal);
}

}  // namespace kc::initwarm
