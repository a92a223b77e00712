#include "initwarm/testing/crash_at.h"

#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "initwarm/failpoint/failpoint.h"

namespace kc::initwarm::testing {
namespace {

struct Point {
  bool armed = false;
  CrashPhase phase = CrashPhase::kHash;
  std::uint64_t n = 0;
};

Point Load() {
  Point p;
  const char* v = std::getenv(kCrashEnv);
  if (v == nullptr || *v == '\0') return p;
  const std::string s(v);
  const auto colon = s.find(':');
  auto phase = ParseCrashPhase(s.substr(0, colon));
  if (colon == std::string::npos || !phase.ok()) {
    std::cerr << kCrashEnv << "=\"" << s << "\" ignored: want <phase>:<n> ("
              << (phase.ok() ? "no ':'" : phase.status().message()) << ")\n";
    return p;
  }
  p.phase = *phase;
  p.n = std::strtoull(s.c_str() + colon + 1, nullptr, 10);
  p.armed = true;
  return p;
}

void CrashAt(CrashPhase phase, std::uint64_t n, int signal) {
  static const Point point = Load();
  if (point.armed && phase == point.phase && n >= point.n) ::raise(signal);
}

}  // namespace

void InstallCrashAtFromEnv() { SetCrashHook(&CrashAt); }

}  // namespace kc::initwarm::testing
