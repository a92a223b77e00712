// The flags of `initwarm seal` (cmd_seal.cc): declared on a FlagSet, bound
// to SealFlags, and decoded into the SealOptions a seal runs with.
#pragma once

#include <chrono>
#include <string>

#include "base/flags.h"
#include "base/status.h"
#include "initwarm/cache/seal.h"
#include "initwarm/cli/cmd_common.h"

namespace kc::initwarm {

// The flags as given; defaults are the flags' (SealOptions' threads and
// lock age).
struct SealFlags {
  SealFlags();
  std::string root;
  std::string fingerprint;
  OwnerFlags owner;
  std::string staging;
  std::string node_facts;
  std::string runtime_facts;
  bool allow_empty = false;
  bool replace = false;
  int threads = 0;
  std::chrono::seconds lock_stale_after;
  std::string termination_log;
  std::string convergence_record;
  std::string on_not_converged = "Publish";
};

// Declares every flag of `initwarm seal` on `f`, bound to `flags`.
void AddSealFlags(FlagSet* f, SealFlags* flags);

// Decodes the flags (the owner resolved as ResolveOwner does, without a
// random one) and checks them as SealFingerprint does: an error (bad facts,
// an inconsistent or bad fingerprint, a missing or unsafe owner) is a usage
// error, naming the flag.
StatusOr<SealOptions> DecodeSealFlags(const SealFlags& flags);

// Reads and parses the record --convergence-record names into
// o->convergence (nothing without the flag). Not part of DecodeSealFlags:
// `initwarm drive` checks the seal's flags before the passes write it.
Status ReadConvergenceRecord(const SealFlags& flags, SealOptions* o);

// The policy of --on-not-converged (decoded by DecodeSealFlags too).
StatusOr<core::NotConvergedPolicy> NotConvergedPolicyFlag(const SealFlags& flags);

// The exit code (core/exit_codes.h) of a seal that ended with `s` (an
// InvalidArgument from Seal itself is a refused staging tree).
int SealExitCode(const Status& s);

}  // namespace kc::initwarm
