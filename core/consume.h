// The consume contract: how a model pod gets its fingerprint's cache. The
// API spells it spec.consume (crds/kernelcache.kernelcache.io.yaml, whose
// enums are the schema); the admission webhook hands it to `initwarm wait`
// as --mode, --verify, --timeout and --on-timeout (core/gate_args.h).
// Each enum has one parse and one name function, used on every side; the
// defaults, stated once here, are the CRD's.
//
//   mode       Copy | Shared | SharedReadWrite          default Copy
//   onTimeout  Fail | StartCold                         default Fail
//   verify     a core::Level name (core/validate.h)     default Manifest
//   waitTimeoutSeconds                                  default 900
// Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "core/validate.h"

namespace kc::core {

// Copy: a validated copy in the pod (writable, isolated); Shared: the
// volume's cache mounted read-only; SharedReadWrite: mounted writable.
enum class ConsumeMode { kCopy, kShared, kSharedReadWrite };
// What the gate does when no usable cache comes in time: fail the pod, or
// start it cold with an empty cache view.
enum class OnTimeout { kFail, kStartCold };

inline constexpr ConsumeMode kDefaultConsumeMode = ConsumeMode::kCopy;
inline constexpr OnTimeout kDefaultOnTimeout = OnTimeout::kFail;
inline constexpr Level kDefaultVerifyLevel = Level::kManifest;
inline constexpr std::int64_t kDefaultWaitTimeoutSeconds = 900;

constexpr std::string_view ConsumeModeName(ConsumeMode m) {
  switch (m) {
    case ConsumeMode::kCopy:
      return "Copy";
    case ConsumeMode::kShared:
      return "Shared";
    case ConsumeMode::kSharedReadWrite:
      return "SharedReadWrite";
  }
  return "?";
}

constexpr std::string_view OnTimeoutName(OnTimeout t) {
  switch (t) {
    case OnTimeout::kFail:
      return "Fail";
    case OnTimeout::kStartCold:
      return "StartCold";
  }
  return "?";
}

// The exact names above. InvalidArgument quotes the value and lists the
// names ("\"Link\" is not one of Copy, Shared, SharedReadWrite"); callers
// put the field or flag in front.
StatusOr<ConsumeMode> ParseConsumeMode(std::string_view name);
StatusOr<OnTimeout> ParseOnTimeout(std::string_view name);

}  // namespace kc::core
