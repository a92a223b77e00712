// The exit codes of the initwarm subcommands (see docs/cache-layout.md): a
// wire contract, written by initwarm and read by the operator from a warmup
// or gate container's terminated state (operator/decide/views.cc).
#pragma once

namespace kc::core {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;    // I/O or internal error; the message says which
inline constexpr int kExitUsage = 2;    // bad flags
inline constexpr int kExitTimeout = 3;  // wait: timed out (or warmup failed) with --on-timeout Fail
inline constexpr int kExitMismatch = 4;      // wait: resolver and local probe disagree
inline constexpr int kExitLockHeld = 5;      // prepare/seal: another writer holds the lock
inline constexpr int kExitAlreadyReady = 6;  // seal: fingerprint already published (no --replace)
inline constexpr int kExitEmpty = 7;         // seal: empty cache without --allow-empty
inline constexpr int kExitNoSpace = 8;       // seal: disk full; nothing published
// verify, wait: validation failed (quarantined unless told not to)
inline constexpr int kExitInvalid = 9;
// wait: the operator's answer is final, this pod gets no cache (invalid
// spec, node not selected or without a fingerprint), with --on-timeout Fail
inline constexpr int kExitNoCache = 10;
// prepare: the cache volume is not writable by this uid/gid (a root-owned
// export); the message says how to fix it (core::ExportFix)
inline constexpr int kExitPermissionDenied = 11;
// seal: the staging tree holds what a cache may not (a symlink leaving the
// cache, a FIFO, socket or device, a name a cache may not hold); nothing
// published. The same warmup output is refused again: fix the warmup.
inline constexpr int kExitRefused = 12;
// drive: the server warmup's server never became ready within --timeout, a
// request of the plan failed or answered non-2xx, or the staging tree never
// settled; nothing published (the seal did not run).
inline constexpr int kExitDriveFailed = 13;
// seal: the warmup did not converge within its convergence passes and
// spec.warmup.convergence.onNotConverged is Fail; nothing published.
inline constexpr int kExitNotConverged = 14;

}  // namespace kc::core
