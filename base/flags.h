// FlagSet: the one command-line layer of both programs (the operator's
// flags and config file, initwarm's subcommands).
//
// A flag is declared once, bound to the variable it sets: its name, its type
// (string, bool, integer with bounds, duration, list), its help text, and
// optionally an environment variable. The variable's value at declaration is
// the default, and --help shows it; nothing else states it.
//
//   std::string root = "/var/cache/kernelcache";
//   std::chrono::seconds max_age{86400};
//   int threads = 0;
//   FlagSet f("usage: initwarm gc [flags]", "Removes leftovers ...");
//   f.String("root", &root, "the cache volume's mount path").Env("KC_CACHE_ROOT");
//   f.Duration("staging-max-age", &max_age, kInitwarmDurations, "remove staging older than this");
//   f.Int("threads", &threads, 0, 1024, "hashing threads (0: twice the cores)");
//   Status s = f.Parse(args);  // then f.help_requested(): print f.Help(), exit 0
//
// Forms: "--name=value" and "--name value"; a boolean alone ("--dry-run") is
// true, and takes a following true|false|1|0|yes|no|on|off as its value. A
// list takes a comma list (items trimmed, empty items dropped); a repeatable
// list collects every occurrence. Command-line values are trimmed.
// Precedence: the default < the flag's environment variable (set and not
// empty) < the command line. "--help" or "-h" ends parsing: what follows is
// neither read nor checked, and it is not an error.
//
// Every problem is InvalidArgument naming the flag and the fix:
//   unknown flag --nope (see --help)
//   unexpected argument "stray": flags look like --name=value
//   --kubeconfig: missing value
//   --workers: 0 is out of range 1..64
//   --workers: "many" is not an integer
//   --leader-elect: "maybe" is not a boolean (use true or false)
//   --lease-duration: "ten" is not a duration (want e.g. 90, 45s, 5m, 1h30m)
//   --retry-period: duration "999999999h" is too long: at most 87600h
// Values are quoted to 64 bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "base/status.h"

namespace kc {

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment (std::getenv).
std::optional<std::string> ProcessEnv(const std::string& name);

class FlagSet {
 public:
  enum class Kind { kString, kBool, kInt, kDuration, kList };

  // One declaration; the declaring calls return it for the optional parts.
  class Flag {
   public:
    // Consulted when the flag is not on the command line.
    Flag& Env(std::string variable);
    // Shown in --help instead of the default value ("$POD_NAME or host_pid").
    Flag& DefaultText(std::string text);
    // Lists: every occurrence on the command line adds to the list.
    Flag& Repeatable();

    const std::string& name() const { return name_; }
    Kind kind() const { return kind_; }

   private:
    friend class FlagSet;
    // Sets the variable from `value`; errors begin with `where`. `append`:
    // a later occurrence of a repeatable list.
    using Setter =
        std::function<Status(const std::string& where, std::string_view value, bool append)>;
    Flag(std::string name, Kind kind, std::string help, std::string default_text, Setter set)
        : name_(std::move(name)),
          kind_(kind),
          help_(std::move(help)),
          default_text_(std::move(default_text)),
          set_(std::move(set)) {}
    std::string name_;
    Kind kind_;
    std::string help_;
    std::string default_text_;
    Setter set_;
    std::string env_;
    std::string range_;  // integers: "1..64"
    bool repeatable_ = false;
  };

  // `usage`: the first line of Help() ("usage: initwarm gc [flags]");
  // `summary`: the paragraph under it ("" for none).
  explicit FlagSet(std::string usage, std::string summary = {});
  FlagSet(const FlagSet&) = delete;
  FlagSet& operator=(const FlagSet&) = delete;

  // Declarations. The target must outlive the FlagSet's parsing.
  Flag& String(std::string name, std::string* target, std::string help);
  Flag& Bool(std::string name, bool* target, std::string help);
  Flag& Int(std::string name, int* target, int64_t min, int64_t max, std::string help);
  // Absent unless given.
  Flag& Int(std::string name, std::optional<int>* target, int64_t min, int64_t max,
            std::string help);
  Flag& Duration(std::string name, std::chrono::seconds* target, const DurationSyntax& syntax,
                 std::string help);
  Flag& List(std::string name, std::vector<std::string>* target, std::string help);

  // A flag and its value as given on the command line.
  struct Arg {
    const Flag* flag;
    std::string value;
  };
  // Pass 1: splits `args` (argv without the program and command) into flags
  // and values, checking names only. After "--help"/"-h" it stops, and
  // help_requested() is true.
  StatusOr<std::vector<Arg>> Split(const std::vector<std::string>& args);
  // Pass 2: sets the variables, in order; the first bad value's error.
  Status Apply(const std::vector<Arg>& given);
  // Sets the flags not in `given` that have an environment variable from
  // it (when set and not empty); errors as Apply's.
  Status ApplyEnvironment(const std::vector<Arg>& given, const EnvLookup& env = ProcessEnv);
  // Split, ApplyEnvironment, Apply.
  Status Parse(const std::vector<std::string>& args, const EnvLookup& env = ProcessEnv);

  // Sets one flag by name (a config file's key); errors as Apply's. Unknown
  // names are NotFound.
  Status Set(std::string_view name, std::string_view value);
  const Flag* Find(std::string_view name) const;

  bool help_requested() const { return help_; }
  // Given on the command line (not only by default or environment).
  bool IsSet(std::string_view name) const;
  // Usage line, summary, then every flag with its help, default, range and
  // environment variable, in declaration order.
  std::string Help() const;

 private:
  Flag& Add(std::string name, Kind kind, std::string help, std::string default_text,
            Flag::Setter set);

  std::string usage_;
  std::string summary_;
  std::vector<std::unique_ptr<Flag>> flags_;
  std::set<std::string, std::less<>> given_;
  bool help_ = false;
};

}  // namespace kc
