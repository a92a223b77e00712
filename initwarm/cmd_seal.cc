// `initwarm seal`: hash, write the manifest, publish atomically.
#include <iostream>

#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/exit_codes.h"
#include "initwarm/seal.h"

namespace kc::initwarm {

int RunSeal(const std::vector<std::string>& args) {
  Flags f("seal",
          "Seals the staging directory of this warmup: walks it, hashes every file (sha256, "
          "all cores), writes manifest.json, renames it to v1/<fingerprint> and writes READY "
          "last. Prints one JSON result line and writes it to the termination log.\n\n"
          "exit codes: 0 published; 2 bad flags; 5 another live writer holds the lock; 6 the "
          "fingerprint is already READY (pass --replace); 7 the staging directory is empty "
          "(pass --allow-empty); 8 the volume is full (nothing published, staging kept); 1 any "
          "other error (nothing published).");
  AddRootFlag(&f);
  f.String("fingerprint", "",
           "fingerprint id; computed from --node-facts/--runtime-facts when omitted",
           "KC_FINGERPRINT");
  AddOwnerFlag(&f);
  f.String("staging", "", "staging directory (default: v1/.staging/<fingerprint>-<job-uid>)");
  f.String("node-facts", "",
           "node part of the fingerprint: inline JSON or a file, "
           "{\"gpuProduct\",\"computeCapability\",\"driver\",\"cudaDriver\",\"arch\"}",
           "KC_NODE_FACTS");
  f.String("runtime-facts", "",
           "runtime part: inline JSON or a file, {\"image\",\"versions\":{},\"env\":{}}",
           "KC_RUNTIME_FACTS");
  f.Bool("allow-empty", "publish even when the warmup wrote no files");
  f.Bool("replace", "replace a READY cache of the same fingerprint (the old one is quarantined)");
  f.String("threads", "0", "hashing threads (0: twice the cores)");
  f.String("lock-stale-after", "2h", "a lock older than this is taken as dead and broken");
  AddTerminationLogFlag(&f);
  if (int rc = ParseOrExit(&f, args); rc >= 0) return rc;

  SealOptions o;
  o.root = f.Get("root");
  o.fingerprint = f.Get("fingerprint");
  o.owner = ResolveOwner(f, /*allow_random=*/false);
  o.staging = f.Get("staging");
  o.allow_empty = f.GetBool("allow-empty");
  o.replace = f.GetBool("replace");
  auto fail = [&](const Status& s, int code) {
    PrintError("seal", s);
    std::string msg = SealFailureJson(o.fingerprint, s);
    std::cout << msg << "\n";
    WriteTerminationMessage(f, msg);
    return code;
  };
  auto threads = f.GetInt("threads", 0, 1024);
  if (!threads.ok()) return fail(threads.status(), kExitUsage);
  o.threads = static_cast<int>(*threads);
  auto stale = f.GetSeconds("lock-stale-after");
  if (!stale.ok()) return fail(stale.status(), kExitUsage);
  o.lock_stale_after_s = *stale;
  auto node = NodeFactsArg(f.Get("node-facts"));
  if (!node.ok()) return fail(node.status(), kExitUsage);
  auto runtime = RuntimeFactsArg(f.Get("runtime-facts"));
  if (!runtime.ok()) return fail(runtime.status(), kExitUsage);
  o.node = *node;
  o.runtime = *runtime;

  auto r = Seal(o);
  if (!r.ok()) {
    switch (r.status().code()) {
      case StatusCode::kInvalidArgument:
        return fail(r.status(), kExitUsage);
      case StatusCode::kConflict:
        return fail(r.status(), kExitLockHeld);
      case StatusCode::kAlreadyExists:
        return fail(r.status(), kExitAlreadyReady);
      case StatusCode::kFailedPrecondition:
        return fail(r.status(), kExitEmpty);
      case StatusCode::kResourceExhausted:
        return fail(r.status(), kExitNoSpace);
      default:
        return fail(r.status(), kExitError);
    }
  }
  std::string msg = SealResultJson(*r);
  std::cout << msg << "\n";
  WriteTerminationMessage(f, msg);
  if (!r->warning.empty()) std::cerr << "initwarm seal: warning: " << r->warning << "\n";
  return kExitOk;
}

}  // namespace kc::initwarm
