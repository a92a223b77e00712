#include "operator/serving/logging.h"

#include <cstdio>
#include <ctime>
#include <iostream>
#include <random>

namespace kc::op {
namespace {

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

std::string FormatTs(std::chrono::system_clock::time_point t) {
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - secs).count();
  const std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::mutex g_default_mu;
Logger* g_default = nullptr;

}  // namespace

LogLevel ParseLogLevel(std::string_view s) {
  if (s == "debug") return LogLevel::kDebug;
  if (s == "warn") return LogLevel::kWarn;
  if (s == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}

Logger::Logger(std::ostream* out, bool json, LogLevel min_level, Clock clock)
    : sink_(std::make_shared<Sink>()), bound_(nlohmann::json::object()) {
  sink_->out = out;
  sink_->json = json;
  sink_->min_level = min_level;
  sink_->clock = clock ? std::move(clock) : [] { return std::chrono::system_clock::now(); };
}

Logger Logger::With(const nlohmann::json& fields) const {
  nlohmann::json merged = bound_;
  if (fields.is_object()) {
    for (const auto& [k, v] : fields.items()) merged[k] = v;
  }
  return Logger(sink_, std::move(merged));
}

Logger Logger::With(std::string_view key, const nlohmann::json& value) const {
  nlohmann::json merged = bound_;
  merged[std::string(key)] = value;
  return Logger(sink_, std::move(merged));
}

bool Logger::Enabled(LogLevel level) const { return level >= sink_->min_level; }

void Logger::Log(LogLevel level, std::string_view msg, const nlohmann::json& fields) const {
  if (!Enabled(level)) return;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = FormatTs(sink_->clock());
  line["level"] = LevelName(level);
  line["msg"] = std::string(msg);
  for (const auto& [k, v] : bound_.items()) line[k] = v;
  if (fields.is_object()) {
    for (const auto& [k, v] : fields.items()) line[k] = v;
  }
  std::string text;
  if (sink_->json) {
    // Invalid UTF-8 in a message must not throw: replace it.
    text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    std::string level_upper = LevelName(level);
    for (char& c : level_upper) c = static_cast<char>(std::toupper(c));
    text = line["ts"].get<std::string>() + " " + level_upper + " " + std::string(msg);
    for (const auto& [k, v] : line.items()) {
      if (k == "ts" || k == "level" || k == "msg") continue;
      text += " " + k + "=" +
              (v.is_string() ? v.get<std::string>()
                             : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
  std::lock_guard<std::mutex> l(sink_->mu);
  *sink_->out << text << '\n';
  sink_->out->flush();
}

const Logger& DefaultLogger() {
  std::lock_guard<std::mutex> l(g_default_mu);
  if (g_default == nullptr) g_default = new Logger(&std::cerr, true, LogLevel::kInfo);  // NOLINT
  return *g_default;
}

void SetDefaultLogger(const Logger& logger) {
  std::lock_guard<std::mutex> l(g_default_mu);
  // Leaked on purpose: references handed out earlier stay valid.
  g_default = new Logger(logger);  // NOLINT(cppcoreguidelines-owning-memory)
}

std::string NewReconcileId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace kc::op
