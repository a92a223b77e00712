#include "initwarm/cli/seams.h"

#include <utility>

namespace kc::initwarm {
namespace {

Seams& Installed() {
  static Seams s;
  return s;
}

}  // namespace

void InstallSeams(Seams s) { Installed() = std::move(s); }
const Seams& InstalledSeams() { return Installed(); }

}  // namespace kc::initwarm
