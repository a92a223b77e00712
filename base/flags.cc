#include "base/flags.h"

#include <cstdlib>
#include <map>

#include "base/numbers.h"
#include "base/strings.h"

namespace kc {
namespace {

// A hostile value is quoted to at most 64 bytes.
std::string Quoted(std::string_view v) {
  return "\"" + std::string(v.substr(0, 64)) + (v.size() > 64 ? "...\"" : "\"");
}

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<bool> BoolValue(std::string_view v) {
  if (v == "true" || v == "1" || v == "on" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "off" || v == "no") return false;
  return std::nullopt;
}

std::vector<std::string> SplitList(std::string_view v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t end = v.find(',', start);
    if (end == std::string_view::npos) end = v.size();
    std::string_view item = Trim(v.substr(start, end - start));
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

FlagSet::Flag& FlagSet::Flag::Env(std::string variable) {
  env_ = std::move(variable);
  return *this;
}
FlagSet::Flag& FlagSet::Flag::DefaultText(std::string text) {
  default_text_ = std::move(text);
  return *this;
}
FlagSet::Flag& FlagSet::Flag::Repeatable() {
  repeatable_ = true;
  return *this;
}

FlagSet::FlagSet(std::string usage, std::string summary)
    : usage_(std::move(usage)), summary_(std::move(summary)) {}

FlagSet::Flag& FlagSet::Add(std::string name, Kind kind, std::string help, std::string default_text,
                            Flag::Setter set) {
  flags_.push_back(std::unique_ptr<Flag>(
      new Flag(std::move(name), kind, std::move(help), std::move(default_text), std::move(set))));
  return *flags_.back();
}

FlagSet::Flag& FlagSet::String(std::string name, std::string* target, std::string help) {
  return Add(std::move(name), Kind::kString, std::move(help), *target,
             [target](const std::string&, std::string_view v, bool) {
               *target = std::string(v);
               return OkStatus();
             });
}

FlagSet::Flag& FlagSet::Bool(std::string name, bool* target, std::string help) {
  return Add(std::move(name), Kind::kBool, std::move(help), *target ? "true" : "",
             [target](const std::string& where, std::string_view v, bool) -> Status {
               std::optional<bool> b = BoolValue(v);
               if (!b) {
                 return InvalidArgumentError(where + ": " + Quoted(v) +
                                             " is not a boolean (use true or false)");
               }
               *target = *b;
               return OkStatus();
             });
}

FlagSet::Flag& FlagSet::Int(std::string name, int* target, int64_t min, int64_t max,
                            std::string help) {
  Flag& f = Add(std::move(name), Kind::kInt, std::move(help), std::to_string(*target),
                [target, min, max](const std::string& where, std::string_view v, bool) -> Status {
                  KC_ASSIGN_OR_RETURN(int64_t n, ParseInt64(v, where, min, max));
                  *target = static_cast<int>(n);
                  return OkStatus();
                });
  f.range_ = std::to_string(min) + ".." + std::to_string(max);
  return f;
}

FlagSet::Flag& FlagSet::Int(std::string name, std::optional<int>* target, int64_t min, int64_t max,
                            std::string help) {
  Flag& f = Add(std::move(name), Kind::kInt, std::move(help),
                target->has_value() ? std::to_string(**target) : "",
                [target, min, max](const std::string& where, std::string_view v, bool) -> Status {
                  KC_ASSIGN_OR_RETURN(int64_t n, ParseInt64(v, where, min, max));
                  *target = static_cast<int>(n);
                  return OkStatus();
                });
  f.range_ = std::to_string(min) + ".." + std::to_string(max);
  return f;
}

FlagSet::Flag& FlagSet::Duration(std::string name, std::chrono::seconds* target,
                                 const DurationSyntax& syntax, std::string help) {
  return Add(
      std::move(name), Kind::kDuration, std::move(help), FormatDuration(*target, syntax.days),
      [target, syntax](const std::string& where, std::string_view v, bool) -> Status {
        DurationFault fault = DurationFault::kMalformed;
        StatusOr<std::chrono::seconds> d = ParseDuration(v, syntax, &fault);
        if (d.ok()) {
          *target = *d;
          return OkStatus();
        }
        if (fault == DurationFault::kMalformed) {
          return InvalidArgumentError(where + ": " + Quoted(v) + " is not a duration (want " +
                                      DurationExamples(syntax) + ")");
        }
        return d.status().WithContext(where);
      });
}

FlagSet::Flag& FlagSet::List(std::string name, std::vector<std::string>* target, std::string help) {
  return Add(std::move(name), Kind::kList, std::move(help), StrJoin(*target, ","),
             [target](const std::string&, std::string_view v, bool append) {
               std::vector<std::string> items = SplitList(v);
               if (!append) target->clear();
               target->insert(target->end(), items.begin(), items.end());
               return OkStatus();
             });
}

const FlagSet::Flag* FlagSet::Find(std::string_view name) const {
  for (const auto& f : flags_) {
    if (f->name_ == name) return f.get();
  }
  return nullptr;
}

StatusOr<std::vector<FlagSet::Arg>> FlagSet::Split(const std::vector<std::string>& args) {
  std::vector<Arg> given;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      return given;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      return InvalidArgumentError("unexpected argument " + Quoted(a) +
                                  ": flags look like --name=value");
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      return InvalidArgumentError("unknown flag --" + name.substr(0, 64) + " (see --help)");
    }
    if (!value) {
      if (flag->kind_ == Kind::kBool) {
        const bool next_is_bool = i + 1 < args.size() && BoolValue(args[i + 1]).has_value();
        value = next_is_bool ? args[++i] : "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return InvalidArgumentError("--" + name + ": missing value");
      }
    }
    given.push_back({flag, std::move(*value)});
  }
  return given;
}

Status FlagSet::Apply(const std::vector<Arg>& given) {
  for (const Arg& a : given) {
    const bool append = a.flag->repeatable_ && given_.count(a.flag->name_) > 0;
    KC_RETURN_IF_ERROR(a.flag->set_("--" + a.flag->name_, Trim(a.value), append));
    given_.insert(a.flag->name_);
  }
  return OkStatus();
}

Status FlagSet::ApplyEnvironment(const std::vector<Arg>& given, const EnvLookup& env) {
  for (const auto& f : flags_) {
    if (f->env_.empty()) continue;
    bool on_command_line = false;
    for (const Arg& a : given) on_command_line |= a.flag == f.get();
    if (on_command_line) continue;
    std::optional<std::string> v = env(f->env_);
    if (!v || v->empty()) continue;
    KC_RETURN_IF_ERROR(f->set_("--" + f->name_ + " (from $" + f->env_ + ")", *v, false));
  }
  return OkStatus();
}

Status FlagSet::Parse(const std::vector<std::string>& args, const EnvLookup& env) {
  KC_ASSIGN_OR_RETURN(std::vector<Arg> given, Split(args));
  if (help_) return OkStatus();
  KC_RETURN_IF_ERROR(ApplyEnvironment(given, env));
  return Apply(given);
}

Status FlagSet::Set(std::string_view name, std::string_view value) {
  const Flag* f = Find(name);
  if (f == nullptr) return NotFoundError("unknown flag --" + std::string(name.substr(0, 64)));
  return f->set_("--" + f->name_, value, false);
}

bool FlagSet::IsSet(std::string_view name) const { return given_.count(name) > 0; }

std::string FlagSet::Help() const {
  std::string h = usage_ + "\n";
  if (!summary_.empty()) h += "\n" + summary_ + "\n";
  h += "\nflags:\n";
  for (const auto& f : flags_) {
    h += "  --" + f->name_;
    switch (f->kind_) {
      case Kind::kBool:
        h += "[=BOOL]";
        break;
      case Kind::kList:
        h += "=VALUE[,VALUE...]";
        break;
      default:
        h += "=VALUE";
        break;
    }
    h += "\n      " + f->help_;
    std::vector<std::string> notes;
    if (!f->default_text_.empty()) notes.push_back("default " + f->default_text_);
    if (!f->range_.empty()) notes.push_back(f->range_);
    if (f->repeatable_) notes.push_back("repeatable");
    if (!notes.empty()) h += " (" + StrJoin(notes, "; ") + ")";
    if (!f->env_.empty()) h += " [env " + f->env_ + "]";
    h += "\n";
  }
  return h;
}

}  // namespace kc
