#include "core/job_args.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <limits>
#include <set>
#include <span>
#include <string_view>

#include "base/duration.h"

namespace kc::core {
namespace {

std::string Quote(std::string_view v) { return "\"" + std::string(v.substr(0, 64)) + "\""; }

// "--<name>=<value>".
std::string Eq(const char* name, std::string_view value) {
  return "--" + std::string(name) + "=" + std::string(value);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// ---- decoding: one table of the flags a command's struct carries.
enum class Kind { kValue, kBool, kList };  // kList: repeatable
using Setter = std::function<Status(std::string_view value)>;
struct FlagDef {
  const char* name;
  Kind kind;
  Setter set;
};

// Sets the flags of `args` (argv without the command) by `defs`: forms
// "--name=value" and "--name value"; a bool alone is true.
Status DecodeFlags(std::string_view command, std::span<const std::string> args,
                   const std::vector<FlagDef>& defs) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (!arg.starts_with("--") || arg.size() == 2 || arg[2] == '=') {
      return InvalidArgumentError("initwarm " + std::string(command) + " argument " + Quote(arg) +
                                  " is not --<flag>[=<value>]");
    }
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(2, eq == std::string_view::npos ? eq : eq - 2);
    const std::string flag = "--" + std::string(name.substr(0, 64));
    const auto def =
        std::find_if(defs.begin(), defs.end(), [&](const FlagDef& d) { return name == d.name; });
    if (def == defs.end()) {
      return InvalidArgumentError(flag + " is not a flag the operator writes for initwarm " +
                                  std::string(command));
    }
    if (!seen.insert(def->name).second && def->kind != Kind::kList) {
      return InvalidArgumentError(flag + " is given twice");
    }
    std::string_view value;
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (def->kind == Kind::kBool) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return InvalidArgumentError(flag + ": missing value");
    }
    if (Status s = def->set(value); !s.ok()) return s.WithContext(flag);
  }
  return OkStatus();
}

Setter Str(std::string* out) {
  return [out](std::string_view v) {
    *out = std::string(v);
    return OkStatus();
  };
}

Setter Bool(bool* out) {
  return [out](std::string_view v) {
    if (v != "true" && v != "false")
      return InvalidArgumentError(Quote(v) + " is not true or false");
    *out = v == "true";
    return OkStatus();
  };
}

StatusOr<std::int64_t> Integer(std::string_view v, std::int64_t min, std::int64_t max) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
    return InvalidArgumentError(Quote(v) + " is not an integer");
  }
  if (n < min || n > max) {
    return InvalidArgumentError(std::to_string(n) + " is out of range " + std::to_string(min) +
                                ".." + std::to_string(max));
  }
  return n;
}

template <class T>
Setter Int(T* out, std::int64_t min = 0, std::int64_t max = std::numeric_limits<T>::max()) {
  return [out, min, max](std::string_view v) -> Status {
    KC_ASSIGN_OR_RETURN(std::int64_t n, Integer(v, min, max));
    *out = static_cast<T>(n);
    return OkStatus();
  };
}

template <class T>
Setter OptInt(std::optional<T>* out) {
  return [out](std::string_view v) -> Status {
    KC_ASSIGN_OR_RETURN(std::int64_t n, Integer(v, 0, std::numeric_limits<T>::max()));
    *out = static_cast<T>(n);
    return OkStatus();
  };
}

Setter Seconds(std::chrono::seconds* out) {
  return [out](std::string_view v) -> Status {
    KC_ASSIGN_OR_RETURN(*out, ParseDuration(v, kInitwarmDurations));
    return OkStatus();
  };
}

// Each comma-separated item, trimmed; empty items dropped.
void ForEachItem(std::string_view v, const std::function<void(std::string_view)>& f) {
  while (true) {
    const size_t comma = v.find(',');
    std::string_view item = v.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) f(item);
    if (comma == std::string_view::npos) return;
    v.remove_prefix(comma + 1);
  }
}

Setter List(std::vector<std::string>* out) {
  return [out](std::string_view v) {
    ForEachItem(v, [out](std::string_view item) { out->emplace_back(item); });
    return OkStatus();
  };
}

Status CheckCommand(const std::vector<std::string>& argv, const char* command) {
  if (argv.empty() || argv[0] != command) {
    return InvalidArgumentError(std::string("initwarm ") + command +
                                " arguments must start with \"" + command + "\"");
  }
  return OkStatus();
}

// `argv` is `command` and its flags, decoded by `defs`.
Status DecodeCommand(const std::vector<std::string>& argv, const char* command,
                     const std::vector<FlagDef>& defs) {
  KC_RETURN_IF_ERROR(CheckCommand(argv, command));
  return DecodeFlags(command, std::span<const std::string>(argv).subspan(1), defs);
}

std::span<const std::string> Rest(const std::vector<std::string>& argv, size_t from, size_t to) {
  return std::span<const std::string>(argv).subspan(from, to - from);
}

}  // namespace

// ---- prepare

std::vector<std::string> PrepareArgv(const PrepareArgs& a) {
  namespace f = prepare_flag;
  std::vector<std::string> argv = {kPrepareCommand, Eq(f::kRoot, a.root), Eq(f::kView, a.view),
                                   Eq(f::kFingerprint, a.fingerprint),
                                   Eq(f::kStagingId, a.staging_id)};
  if (!a.install_runner.empty()) argv.push_back(Eq(f::kInstallRunner, a.install_runner));
  if (!a.break_lock_of.empty()) argv.push_back(Eq(f::kBreakLockOf, Join(a.break_lock_of)));
  return argv;
}

StatusOr<PrepareArgs> ParsePrepareArgv(const std::vector<std::string>& argv) {
  namespace f = prepare_flag;
  PrepareArgs a;
  KC_RETURN_IF_ERROR(DecodeCommand(argv, kPrepareCommand,
                                   {{f::kRoot, Kind::kValue, Str(&a.root)},
                                    {f::kView, Kind::kValue, Str(&a.view)},
                                    {f::kFingerprint, Kind::kValue, Str(&a.fingerprint)},
                                    {f::kStagingId, Kind::kValue, Str(&a.staging_id)},
                                    {f::kInstallRunner, Kind::kValue, Str(&a.install_runner)},
                                    {f::kBreakLockOf, Kind::kList, List(&a.break_lock_of)}}));
  return a;
}

// ---- seal

std::vector<std::string> SealArgv(const SealArgs& a) {
  namespace f = seal_flag;
  std::vector<std::string> argv = {
      kSealCommand, Eq(f::kRoot, a.root), Eq(f::kFingerprint, a.fingerprint),
      Eq(f::kStagingId, a.staging_id), Eq(f::kTerminationLog, a.termination_log)};
  if (a.replace) argv.push_back("--" + std::string(f::kReplace));
  if (!a.convergence_record.empty()) {
    argv.push_back(Eq(f::kConvergenceRecord, a.convergence_record));
  }
  if (a.on_not_converged) {
    argv.push_back(Eq(f::kOnNotConverged, NotConvergedPolicyName(*a.on_not_converged)));
  }
  return argv;
}

StatusOr<SealArgs> ParseSealArgv(const std::vector<std::string>& argv) {
  namespace f = seal_flag;
  SealArgs a;
  Setter policy = [&a](std::string_view v) -> Status {
    KC_ASSIGN_OR_RETURN(a.on_not_converged, ParseNotConvergedPolicy(v));
    return OkStatus();
  };
  KC_RETURN_IF_ERROR(
      DecodeCommand(argv, kSealCommand,
                    {{f::kRoot, Kind::kValue, Str(&a.root)},
                     {f::kFingerprint, Kind::kValue, Str(&a.fingerprint)},
                     {f::kStagingId, Kind::kValue, Str(&a.staging_id)},
                     {f::kTerminationLog, Kind::kValue, Str(&a.termination_log)},
                     {f::kReplace, Kind::kBool, Bool(&a.replace)},
                     {f::kConvergenceRecord, Kind::kValue, Str(&a.convergence_record)},
                     {f::kOnNotConverged, Kind::kValue, policy}}));
  return a;
}

// ---- gc

std::vector<std::string> GcArgv(const GcArgs& a) {
  namespace f = gc_flag;
  std::vector<std::string> argv = {kGcCommand, Eq(f::kRoot, a.root)};
  for (const GcRemoval& r : a.remove) {
    argv.push_back(Eq(f::kRemove, r.fingerprint + (r.digest.empty() ? "" : ":" + r.digest)));
  }
  if (!a.break_lock_of.empty()) argv.push_back(Eq(f::kBreakLockOf, Join(a.break_lock_of)));
  return argv;
}

StatusOr<GcArgs> ParseGcArgv(const std::vector<std::string>& argv) {
  namespace f = gc_flag;
  GcArgs a;
  Setter remove = [&a](std::string_view v) {
    ForEachItem(v, [&a](std::string_view item) {
      const size_t colon = item.find(':');
      GcRemoval r{std::string(item.substr(0, colon)), ""};
      if (colon != std::string_view::npos) r.digest = std::string(item.substr(colon + 1));
      if (!r.fingerprint.empty() || !r.digest.empty()) a.remove.push_back(std::move(r));
    });
    return OkStatus();
  };
  KC_RETURN_IF_ERROR(DecodeCommand(argv, kGcCommand,
                                   {{f::kRoot, Kind::kValue, Str(&a.root)},
                                    {f::kRemove, Kind::kList, remove},
                                    {f::kBreakLockOf, Kind::kList, List(&a.break_lock_of)}}));
  return a;
}

// ---- harvest

std::vector<std::string> HarvestArgv(const HarvestArgs& a) {
  namespace f = harvest_flag;
  return {kHarvestCommand,
          Eq(f::kRoot, a.root),
          Eq(f::kFingerprint, a.fingerprint),
          Eq(f::kBaseDigest, a.base_digest),
          Eq(f::kMaxFilesPerPod, std::to_string(a.caps.max_files_per_pod)),
          Eq(f::kMaxBytesPerPod, std::to_string(a.caps.max_bytes_per_pod)),
          Eq(f::kMaxFiles, std::to_string(a.caps.max_files_per_fingerprint)),
          Eq(f::kMaxBytes, std::to_string(a.caps.max_bytes_per_fingerprint)),
          Eq(f::kTerminationLog, a.termination_log)};
}

StatusOr<HarvestArgs> ParseHarvestArgv(const std::vector<std::string>& argv) {
  namespace f = harvest_flag;
  HarvestArgs a;
  HarvestCaps& c = a.caps;
  KC_RETURN_IF_ERROR(DecodeCommand(argv, kHarvestCommand,
                                   {{f::kRoot, Kind::kValue, Str(&a.root)},
                                    {f::kFingerprint, Kind::kValue, Str(&a.fingerprint)},
                                    {f::kBaseDigest, Kind::kValue, Str(&a.base_digest)},
                                    {f::kMaxFilesPerPod, Kind::kValue, Int(&c.max_files_per_pod)},
                                    {f::kMaxBytesPerPod, Kind::kValue, Int(&c.max_bytes_per_pod)},
                                    {f::kMaxFiles, Kind::kValue, Int(&c.max_files_per_fingerprint)},
                                    {f::kMaxBytes, Kind::kValue, Int(&c.max_bytes_per_fingerprint)},
                                    {f::kTerminationLog, Kind::kValue, Str(&a.termination_log)}}));
  return a;
}

// ---- drive

std::vector<std::string> DriveArgv(const DriveArgs& a) {
  namespace f = drive_flag;
  std::vector<std::string> argv = {kDriveCommand, Eq(f::kPort, std::to_string(a.port))};
  if (!a.ready_path.empty()) argv.push_back(Eq(f::kReadyPath, a.ready_path));
  argv.push_back(Eq(f::kTimeout, std::to_string(a.timeout.count())));
  argv.push_back(Eq(f::kRequestTimeout, std::to_string(a.request_timeout.count())));
  argv.push_back(Eq(f::kView, a.view));
  argv.push_back(Eq(f::kTerminationLog, a.termination_log));
  if (a.max_passes) argv.push_back(Eq(f::kMaxPasses, std::to_string(*a.max_passes)));
  if (!a.convergence_record.empty()) {
    argv.push_back(Eq(f::kConvergenceRecord, a.convergence_record));
  }
  argv.emplace_back("--");
  const std::vector<std::string> seal = SealArgv(a.seal);
  argv.insert(argv.end(), seal.begin(), seal.end());
  return argv;
}

StatusOr<DriveArgs> ParseDriveArgv(const std::vector<std::string>& argv) {
  namespace f = drive_flag;
  KC_RETURN_IF_ERROR(CheckCommand(argv, kDriveCommand));
  const size_t dashes = std::find(argv.begin() + 1, argv.end(), "--") - argv.begin();
  if (dashes == argv.size()) {
    return InvalidArgumentError("initwarm drive arguments end with \"-- seal ...\"");
  }
  DriveArgs a;
  KC_RETURN_IF_ERROR(
      DecodeFlags(kDriveCommand, Rest(argv, 1, dashes),
                  {{f::kPort, Kind::kValue, Int(&a.port, 0, 65535)},
                   {f::kReadyPath, Kind::kValue, Str(&a.ready_path)},
                   {f::kTimeout, Kind::kValue, Seconds(&a.timeout)},
                   {f::kRequestTimeout, Kind::kValue, Seconds(&a.request_timeout)},
                   {f::kView, Kind::kValue, Str(&a.view)},
                   {f::kTerminationLog, Kind::kValue, Str(&a.termination_log)},
                   {f::kMaxPasses, Kind::kValue, OptInt(&a.max_passes)},
                   {f::kConvergenceRecord, Kind::kValue, Str(&a.convergence_record)}}));
  auto seal = ParseSealArgv(std::vector<std::string>(argv.begin() + dashes + 1, argv.end()));
  if (!seal.ok()) return seal.status().WithContext("after \"--\"");
  a.seal = std::move(*seal);
  return a;
}

// ---- misses

std::vector<std::string> MissesArgv(const MissesArgs& a) {
  namespace f = misses_flag;
  std::vector<std::string> argv = {kMissesCommand};
  auto add = [&argv](const char* name, std::string value) {
    argv.push_back("--" + std::string(name));
    argv.push_back(std::move(value));
  };
  add(f::kView, a.view);
  add(f::kInterval, std::to_string(a.interval.count()) + "s");
  if (!a.report_url.empty()) add(f::kReportUrl, a.report_url);
  if (!a.token_file.empty()) add(f::kTokenFile, a.token_file);
  if (!a.inbox.empty()) add(f::kInbox, a.inbox);
  if (a.harvest_max_files) add(f::kHarvestMaxFiles, std::to_string(*a.harvest_max_files));
  if (!a.harvest_max_bytes.empty()) add(f::kHarvestMaxBytes, a.harvest_max_bytes);
  return argv;
}

StatusOr<MissesArgs> ParseMissesArgv(const std::vector<std::string>& argv) {
  namespace f = misses_flag;
  MissesArgs a;
  KC_RETURN_IF_ERROR(
      DecodeCommand(argv, kMissesCommand,
                    {{f::kView, Kind::kValue, Str(&a.view)},
                     {f::kInterval, Kind::kValue, Seconds(&a.interval)},
                     {f::kReportUrl, Kind::kValue, Str(&a.report_url)},
                     {f::kTokenFile, Kind::kValue, Str(&a.token_file)},
                     {f::kInbox, Kind::kValue, Str(&a.inbox)},
                     {f::kHarvestMaxFiles, Kind::kValue, OptInt(&a.harvest_max_files)},
                     {f::kHarvestMaxBytes, Kind::kValue, Str(&a.harvest_max_bytes)}}));
  return a;
}

// ---- the convergence runner

std::vector<std::string> ConvergeArgv(const ConvergeArgs& a) {
  namespace f = converge_flag;
  std::vector<std::string> argv = {a.runner, Eq(f::kMaxPasses, std::to_string(a.max_passes)),
                                   Eq(f::kView, a.view), Eq(f::kRecord, a.record), "--"};
  argv.insert(argv.end(), a.command.begin(), a.command.end());
  return argv;
}

StatusOr<ConvergeArgs> ParseConvergeArgv(const std::vector<std::string>& argv) {
  namespace f = converge_flag;
  if (argv.empty() || argv[0].empty()) {
    return InvalidArgumentError("the convergence runner's arguments start with its path");
  }
  const size_t dashes = std::find(argv.begin() + 1, argv.end(), "--") - argv.begin();
  if (dashes == argv.size()) {
    return InvalidArgumentError("the convergence runner's arguments end with \"-- <command>\"");
  }
  ConvergeArgs a;
  a.runner = argv[0];
  KC_RETURN_IF_ERROR(DecodeFlags(kConvergeCommand, Rest(argv, 1, dashes),
                                 {{f::kMaxPasses, Kind::kValue, Int(&a.max_passes)},
                                  {f::kView, Kind::kValue, Str(&a.view)},
                                  {f::kRecord, Kind::kValue, Str(&a.record)}}));
  a.command.assign(argv.begin() + dashes + 1, argv.end());
  return a;
}

}  // namespace kc::core
