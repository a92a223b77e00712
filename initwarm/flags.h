// Flags: a small command-line parser for the initwarm subcommands.
//
// Accepts "--name value", "--name=value", boolean "--name" (and
// "--name=true|false"), repeatable flags, and "--help"/"-h". Every flag has
// a default, an optional environment variable consulted when the flag is
// absent, and a help line; Help() prints them. Unknown flags and positional
// arguments are InvalidArgument naming the argument.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::initwarm {

class Flags {
 public:
  Flags(std::string command, std::string summary);

  void String(const std::string& name, std::string def, std::string help, std::string env = {});
  void Bool(const std::string& name, std::string help);
  void Repeated(const std::string& name, std::string help);

  Status Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_; }
  std::string Help() const;

  const std::string& Get(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  // Every value given; comma-separated values are split.
  std::vector<std::string> GetAll(const std::string& name) const;
  bool IsSet(const std::string& name) const;
  // "90", "90s", "5m", "2h", "1d" -> seconds (at most kMaxFlagSeconds).
  StatusOr<std::int64_t> GetSeconds(const std::string& name) const;
  // A decimal integer in [min, max]; InvalidArgument naming the flag.
  StatusOr<std::int64_t> GetInt(const std::string& name, std::int64_t min, std::int64_t max) const;

 private:
  enum class Kind { kString, kBool, kRepeated };
  struct Def {
    Kind kind;
    std::string def;
    std::string help;
    std::string env;
  };
  std::string command_;
  std::string summary_;
  std::vector<std::string> order_;
  std::map<std::string, Def> defs_;
  std::map<std::string, std::vector<std::string>> values_;
  bool help_ = false;
};

// The longest duration a flag takes: 366 days. Callers multiply seconds
// into milliseconds and add them to clocks; this keeps both far from
// overflow.
inline constexpr std::int64_t kMaxFlagSeconds = 366LL * 86400;

// Parses "90", "90s", "5m", "2h", "1d" into seconds; InvalidArgument when
// malformed or longer than kMaxFlagSeconds.
StatusOr<std::int64_t> ParseSeconds(std::string_view text);

}  // namespace kc::initwarm
