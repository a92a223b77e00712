// Fuzz target: initwarm's flag parsing (initwarm/flags.h). Input: the
// arguments after the subcommand, separated by NUL bytes or newlines, for a
// flag set like `initwarm wait`'s (strings with defaults and environment
// variables, booleans, a repeated flag). Properties: no crash, no
// exception; after a successful parse every accessor answers, durations
// stay within kMaxFlagSeconds and integers within their bounds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/util.h"
#include "initwarm/flags.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  std::string text(kc::fuzz::AsText(data, size));
  for (char& c : text) {
    if (c == '\n') c = '\0';
  }
  std::vector<std::string> args;
  if (!text.empty()) args = kc::fuzz::Split(text, '\0', 256);

  kc::initwarm::Flags f("wait", "fuzz");
  f.String("root", "/var/cache/kernelcache", "the volume");
  f.String("timeout", "900s", "how long to wait", "KC_FUZZ_UNSET_TIMEOUT");
  f.String("mode", "Shared", "Shared|SharedReadWrite|Copy");
  f.String("jobs", "4", "parallel hashers");
  f.Bool("no-probe", "skip the probe");
  f.Repeated("exclude", "paths to leave out");
  if (!f.Parse(args).ok()) return 0;
  (void)f.Help();
  if (f.help_requested()) return 0;
  for (const char* name : {"root", "timeout", "mode", "jobs"}) {
    (void)f.Get(name);
    (void)f.IsSet(name);
    auto s = f.GetSeconds(name);
    if (s.ok()) Check(*s >= 0 && *s <= kc::initwarm::kMaxFlagSeconds);
    auto n = f.GetInt(name, 1, 64);
    if (n.ok()) Check(*n >= 1 && *n <= 64);
  }
  (void)f.GetBool("no-probe");
  (void)f.GetAll("exclude");
  for (const std::string& a : args) {
    auto s = kc::initwarm::ParseSeconds(a);
    if (s.ok()) Check(*s >= 0 && *s <= kc::initwarm::kMaxFlagSeconds);
  }
  return 0;
}
