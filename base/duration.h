// Durations from text and back: the one parser, for the CRD's fields and
// both programs' flags, and the one formatter, for their help and errors and
// for every duration a message shows a person.
//
//   ParseDuration("1h30m")                      -> 5400s   (the CRD's form)
//   ParseDuration("90", kFlagDurations)         -> 90s     (bare seconds)
//   ParseDuration("2d", kInitwarmDurations)     -> 172800s (days)
//
// The grammar is one or more <digits><unit> (units h, m, s; d where the
// syntax allows), or bare decimal seconds where the syntax allows; nothing
// else (no sign, no fraction, no spaces). The CRD takes Go's h/m/s form
// only (metav1.Duration rejects "24" and "1d"); the flags take more.
// A result is never above the syntax's `max`, so no clock arithmetic on it
// can overflow.
//
// Errors are InvalidArgument, the value quoted to 64 bytes:
//   malformed duration "soon": want whole hours, minutes and seconds, e.g. 24h, 90m, 1h30m
//   duration "999999999h" is too long: at most 87600h
// Pure.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc {

// The longest duration the CRD takes: 10 years.
inline constexpr std::chrono::seconds kMaxDuration{87600LL * 3600};

struct DurationSyntax {
  bool bare_seconds = false;  // "90" means 90s
  bool days = false;          // unit d (24h): "2d", "1d12h"
  std::chrono::seconds max = kMaxDuration;
};

// The CRD's fields (spec.retention): Go's form, at most 10 years.
inline constexpr DurationSyntax kApiDurations{};
// The operator's flags: also bare seconds.
inline constexpr DurationSyntax kFlagDurations{.bare_seconds = true};
// initwarm's flags: also days, at most 366 days (callers multiply seconds
// into milliseconds and add them to clocks).
inline constexpr DurationSyntax kInitwarmDurations{
    .bare_seconds = true, .days = true, .max = std::chrono::seconds(366LL * 86400)};

// Why a text was refused, for callers that word the malformed case
// themselves (the flag layer).
enum class DurationFault { kMalformed, kTooLong };

StatusOr<std::chrono::seconds> ParseDuration(std::string_view text,
                                             const DurationSyntax& syntax = kApiDurations,
                                             DurationFault* fault = nullptr);

// Examples of what `syntax` takes: "e.g. 90, 45s, 5m, 1h30m, 2d".
std::string DurationExamples(const DurationSyntax& syntax);

// Exact and short: every unit that is not zero, largest first ("45s",
// "2m", "2m10s", "1h3m", "1h2m5s", "87600h"); with `days`, whole days too
// ("2d4h", "366d"); "0s" for zero and for a negative duration. ParseDuration
// reads it back (with `days`, a syntax that takes days).
std::string FormatDuration(std::chrono::seconds d, bool days = false);

}  // namespace kc
