// `initwarm seal`: hash, write the manifest, publish atomically.
#include <iostream>

#include "core/exit_codes.h"
#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/seal.h"

namespace kc::initwarm {

int RunSeal(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("seal"),
            "Seals the staging directory of this warmup: walks it, hashes every file (sha256, "
            "all cores), writes manifest.json, renames it to v1/<fingerprint> and writes READY "
            "last. Prints one JSON result line and writes it to the termination log.\n\n"
            "exit codes: 0 published; 2 bad flags; 5 another live writer holds the lock; 6 the "
            "fingerprint is already READY (pass --replace); 7 the staging directory is empty "
            "(pass --allow-empty); 8 the volume is full (nothing published, staging kept); 12 the "
            "staging tree was refused: a symlink leaving the cache, a FIFO, socket or device, or "
            "a name a cache may not hold (nothing published); 1 any other error (nothing "
            "published).");
  SealOptions o;  // its threads and lock age are the flags' defaults
  std::string root;
  std::string staging;
  OwnerFlags owner;
  std::string node_facts;
  std::string runtime_facts;
  std::chrono::seconds stale{o.lock_stale_after_s};
  std::string termination_log;
  AddRootFlag(&f, &root);
  f.String("fingerprint", &o.fingerprint,
           "fingerprint id; computed from --node-facts/--runtime-facts when omitted")
      .Env("KC_FINGERPRINT");
  AddOwnerFlag(&f, &owner);
  f.String("staging", &staging, "staging directory")
      .DefaultText("v1/.staging/<fingerprint>-<job-uid>");
  f.String("node-facts", &node_facts,
           "node part of the fingerprint: inline JSON or a file, "
           "{\"gpuProduct\",\"computeCapability\",\"driver\",\"cudaDriver\",\"arch\"}")
      .Env("KC_NODE_FACTS");
  f.String("runtime-facts", &runtime_facts,
           "runtime part: inline JSON or a file, {\"image\",\"versions\":{},\"env\":{}}")
      .Env("KC_RUNTIME_FACTS");
  f.Bool("allow-empty", &o.allow_empty, "publish even when the warmup wrote no files");
  f.Bool("replace", &o.replace,
         "replace a READY cache of the same fingerprint (the old one is quarantined)");
  f.Int("threads", &o.threads, 0, 1024, "hashing threads (0: twice the cores)");
  f.Duration("lock-stale-after", &stale, kInitwarmDurations,
             "a lock older than this is taken as dead and broken");
  AddTerminationLogFlag(&f, &termination_log);
  // Every failure after the flags' names are known, bad values included,
  // is a JSON result on stdout and in the termination log.
  auto fail = [&](const Status& s, int code) {
    PrintError("seal", s);
    std::string msg = SealFailureJson(o.fingerprint, s);
    std::cout << msg << "\n";
    WriteTerminationMessage(f, termination_log, msg);
    return code;
  };
  if (int rc =
          ParseOrExit("seal", &f, args, [&](const Status& s) { return fail(s, core::kExitUsage); });
      rc >= 0) {
    return rc;
  }
  o.root = root;
  o.owner = ResolveOwner(owner, /*allow_random=*/false);
  o.staging = staging;
  o.lock_stale_after_s = stale.count();
  auto node = NodeFactsArg(node_facts);
  if (!node.ok()) return fail(node.status(), core::kExitUsage);
  auto runtime = RuntimeFactsArg(runtime_facts);
  if (!runtime.ok()) return fail(runtime.status(), core::kExitUsage);
  o.node = *node;
  o.runtime = *runtime;
  if (auto fp = SealFingerprint(o); !fp.ok()) return fail(fp.status(), core::kExitUsage);

  auto r = Seal(o);
  if (!r.ok()) {
    switch (r.status().code()) {
      case StatusCode::kInvalidArgument:  // the options passed: the tree was refused
        return fail(r.status(), core::kExitRefused);
      case StatusCode::kConflict:
        return fail(r.status(), core::kExitLockHeld);
      case StatusCode::kAlreadyExists:
        return fail(r.status(), core::kExitAlreadyReady);
      case StatusCode::kFailedPrecondition:
        return fail(r.status(), core::kExitEmpty);
      case StatusCode::kResourceExhausted:
        return fail(r.status(), core::kExitNoSpace);
      default:
        return fail(r.status(), core::kExitError);
    }
  }
  std::string msg = SealResultJson(*r);
  std::cout << msg << "\n";
  WriteTerminationMessage(f, termination_log, msg);
  if (!r->warning.empty()) std::cerr << "initwarm seal: warning: " << r->warning << "\n";
  return core::kExitOk;
}

}  // namespace kc::initwarm
