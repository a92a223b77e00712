#include "initwarm/failpoint.h"

#include <signal.h>

#include <cstdlib>
#include <string>

namespace kc::initwarm {
namespace {

struct Point {
  bool armed = false;
  std::string phase;
  std::uint64_t n = 0;
};

Point Load() {
  Point p;
  const char* v = std::getenv(kCrashEnv);
  if (v == nullptr) return p;
  std::string s(v);
  auto colon = s.find(':');
  if (colon == std::string::npos) return p;
  p.phase = s.substr(0, colon);
  p.n = std::strtoull(s.c_str() + colon + 1, nullptr, 10);
  p.armed = true;
  return p;
}

}  // namespace

void MaybeCrash(std::string_view phase, std::uint64_t n, int signal) {
  static const Point point = Load();
  if (point.armed && phase == point.phase && n >= point.n) ::raise(signal);
}

}  // namespace kc::initwarm
