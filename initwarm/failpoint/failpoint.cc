#include "initwarm/failpoint/failpoint.h"

#include <array>
#include <atomic>
#include <string>
#include <utility>

namespace kc::initwarm {
namespace {

constexpr std::array<std::pair<CrashPhase, std::string_view>, 7> kNames = {{
    {CrashPhase::kHash, "hash"},
    {CrashPhase::kBytes, "bytes"},
    {CrashPhase::kFsync, "fsync"},
    {CrashPhase::kDirsync, "dirsync"},
    {CrashPhase::kManifest, "manifest"},
    {CrashPhase::kPublish, "publish"},
    {CrashPhase::kLoad, "load"},
}};

std::atomic<CrashHook> g_hook{nullptr};

}  // namespace

std::string_view CrashPhaseName(CrashPhase phase) {
  for (const auto& [p, name] : kNames) {
    if (p == phase) return name;
  }
  return "unknown";
}

StatusOr<CrashPhase> ParseCrashPhase(std::string_view name) {
  std::string known;
  for (const auto& [p, n] : kNames) {
    if (n == name) return p;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  return InvalidArgumentError("crash phase \"" + std::string(name) + "\" is unknown: want one of " +
                              known);
}

void SetCrashHook(CrashHook hook) { g_hook.store(hook); }

void MaybeCrash(CrashPhase phase, std::uint64_t n, int signal) {
  if (CrashHook hook = g_hook.load(std::memory_order_relaxed)) hook(phase, n, signal);
}

}  // namespace kc::initwarm
