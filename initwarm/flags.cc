#include "initwarm/flags.h"

#include <cstdlib>
#include <sstream>

#include "base/numbers.h"

namespace kc::initwarm {

Flags::Flags(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void Flags::String(const std::string& name, std::string def, std::string help, std::string env) {
  order_.push_back(name);
  defs_[name] = {Kind::kString, std::move(def), std::move(help), std::move(env)};
}

void Flags::Bool(const std::string& name, std::string help) {
  order_.push_back(name);
  defs_[name] = {Kind::kBool, "false", std::move(help), {}};
}

void Flags::Repeated(const std::string& name, std::string help) {
  order_.push_back(name);
  defs_[name] = {Kind::kRepeated, {}, std::move(help), {}};
}

Status Flags::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      return InvalidArgumentError("initwarm " + command_ + ": unexpected argument \"" + a +
                                  "\"; see --help");
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto it = defs_.find(name);
    if (it == defs_.end()) {
      return InvalidArgumentError("initwarm " + command_ + ": unknown flag --" + name +
                                  "; see --help");
    }
    if (it->second.kind == Kind::kBool) {
      if (!has_value) value = "true";
      if (value != "true" && value != "false") {
        std::string msg = "--" + name;
        msg += "=" + value;
        msg += ": want true or false";
        return InvalidArgumentError(msg);
      }
      values_[name] = {value};
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return InvalidArgumentError("initwarm " + command_ + ": --" + name + " needs a value");
      }
      value = args[++i];
    }
    if (it->second.kind == Kind::kRepeated) {
      values_[name].push_back(value);
    } else {
      values_[name] = {value};
    }
  }
  return OkStatus();
}

std::string Flags::Help() const {
  std::ostringstream os;
  os << "usage: initwarm " << command_ << " [flags]\n\n" << summary_ << "\n\nflags:\n";
  for (const auto& name : order_) {
    const Def& d = defs_.at(name);
    os << "  --" << name;
    if (d.kind == Kind::kString) os << " <value>";
    if (d.kind == Kind::kRepeated) os << " <value> (repeatable, or comma list)";
    os << "\n      " << d.help;
    if (d.kind == Kind::kString && !d.def.empty()) os << " (default: " << d.def << ")";
    if (!d.env.empty()) os << " [env " << d.env << "]";
    os << "\n";
  }
  return os.str();
}

const std::string& Flags::Get(const std::string& name) const {
  static const std::string kEmpty;
  if (auto it = values_.find(name); it != values_.end() && !it->second.empty()) {
    return it->second.back();
  }
  auto d = defs_.find(name);
  if (d == defs_.end()) return kEmpty;
  if (!d->second.env.empty()) {
    if (const char* v = std::getenv(d->second.env.c_str()); v != nullptr && *v != '\0') {
      // Cache in a thread-local map so the reference stays valid.
      static thread_local std::map<std::string, std::string> env_values;
      env_values[name] = v;
      return env_values[name];
    }
  }
  return d->second.def;
}

bool Flags::GetBool(const std::string& name) const { return Get(name) == "true"; }

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  std::vector<std::string> out;
  auto it = values_.find(name);
  if (it == values_.end()) return out;
  for (const auto& v : it->second) {
    size_t start = 0;
    while (start <= v.size()) {
      size_t end = v.find(',', start);
      if (end == std::string::npos) end = v.size();
      if (end > start) out.push_back(v.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

bool Flags::IsSet(const std::string& name) const { return values_.count(name) > 0; }

StatusOr<std::int64_t> Flags::GetSeconds(const std::string& name) const {
  auto s = ParseSeconds(Get(name));
  if (!s.ok()) return s.status().WithContext("--" + name);
  return s;
}

StatusOr<std::int64_t> Flags::GetInt(const std::string& name, std::int64_t min,
                                     std::int64_t max) const {
  return ParseInt64(Get(name), "--" + name, min, max);
}

StatusOr<std::int64_t> ParseSeconds(std::string_view text) {
  const std::string shown(text.substr(0, 64));
  auto bad = [&] {
    return InvalidArgumentError("duration \"" + shown +
                                "\" is malformed: want e.g. 90, 90s, 5m, 2h, 1d");
  };
  if (text.empty()) return bad();
  std::int64_t mult = 1;
  std::string_view digits = text;
  switch (text.back()) {
    case 's':
      digits.remove_suffix(1);
      break;
    case 'm':
      mult = 60;
      digits.remove_suffix(1);
      break;
    case 'h':
      mult = 3600;
      digits.remove_suffix(1);
      break;
    case 'd':
      mult = 86400;
      digits.remove_suffix(1);
      break;
    default:
      break;
  }
  if (digits.empty()) return bad();
  for (char c : digits) {
    if (c < '0' || c > '9') return bad();
  }
  auto too_long = [&] {
    return InvalidArgumentError("duration \"" + shown + "\" is too long: at most " +
                                std::to_string(kMaxFlagSeconds / 86400) + "d");
  };
  if (digits.size() > 12) return too_long();
  std::int64_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');  // <= 12 digits: no overflow
  if (v > kMaxFlagSeconds / mult) return too_long();
  return v * mult;
}

}  // namespace kc::initwarm
