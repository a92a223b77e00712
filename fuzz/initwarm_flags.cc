// Fuzz target: the flag parsing initwarm's subcommands use (base/flags.h,
// base/duration.h). Input: the arguments after the subcommand, separated by
// NUL bytes or newlines, for a flag set like `initwarm wait`'s (strings,
// a boolean, an integer range, a duration, a repeatable list, environment
// variables). Properties: no crash, no exception; after a successful parse
// the integer and the duration stay within their bounds, and Help answers.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/flags.h"
#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  std::string text(kc::fuzz::AsText(data, size));
  for (char& c : text) {
    if (c == '\n') c = '\0';
  }
  std::vector<std::string> args;
  if (!text.empty()) args = kc::fuzz::Split(text, '\0', 256);

  std::string root = "/var/cache/kernelcache", mode = "Shared";
  bool no_probe = false;
  int jobs = 4;
  std::chrono::seconds timeout{900};
  std::vector<std::string> exclude;
  kc::FlagSet f("usage: initwarm wait [flags]", "fuzz");
  f.String("root", &root, "the volume");
  f.String("mode", &mode, "Shared|SharedReadWrite|Copy").Env("KC_FUZZ_MODE");
  f.Bool("no-probe", &no_probe, "skip the probe");
  f.Int("jobs", &jobs, 1, 64, "parallel hashers");
  f.Duration("timeout", &timeout, kc::kInitwarmDurations, "how long to wait")
      .Env("KC_FUZZ_TIMEOUT");
  f.List("exclude", &exclude, "paths to leave out").Repeatable();
  const auto env = [&args](const std::string& name) -> std::optional<std::string> {
    if (name == "KC_FUZZ_TIMEOUT" && !args.empty()) return args.back();
    return std::nullopt;
  };
  const kc::Status parsed = f.Parse(args, env);
  (void)f.Help();
  if (!parsed.ok() || f.help_requested()) return 0;
  Check(jobs >= 1 && jobs <= 64);
  Check(timeout.count() >= 0 && timeout <= kc::kInitwarmDurations.max);
  for (const std::string& a : args) {
    auto d = kc::ParseDuration(a, kc::kInitwarmDurations);
    if (d.ok()) Check(d->count() >= 0 && *d <= kc::kInitwarmDurations.max);
  }
  return 0;
}
