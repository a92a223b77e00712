// Logging: one structured line per event, JSON (default) or text.
//
// A JSON line is {"ts":"2026-12-02T09:33:17.123Z","level":"info","msg":"...",
// <fields>}. The reconciler binds the fields "kernelcache" (namespace/name),
// "reconcileID" and, where one is in play, "fingerprint"; other fields are
// free-form. Text lines are "<ts> INFO msg key=value ...".
//
// Thread-safe: a line is written whole under a mutex. Loggers made by With()
// share the sink of their parent. Errors are logged once, where handled.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace kc::op {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// "debug" | "info" | "warn" | "error" (unknown -> info).
LogLevel ParseLogLevel(std::string_view s);

class Logger {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;

  // `out` must outlive every Logger made from this one. `json`: JSON lines,
  // else text.
  Logger(std::ostream* out, bool json, LogLevel min_level, Clock clock = nullptr);

  // A logger whose lines also carry `fields` (a JSON object).
  Logger With(const nlohmann::json& fields) const;
  Logger With(std::string_view key, const nlohmann::json& value) const;

  void Log(LogLevel level, std::string_view msg, const nlohmann::json& fields = nullptr) const;
  void Debug(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Log(LogLevel::kDebug, msg, fields);
  }
  void Info(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Log(LogLevel::kError, msg, fields);
  }
  bool Enabled(LogLevel level) const;

 private:
  struct Sink {
    std::mutex mu;
    std::ostream* out;
    bool json;
    LogLevel min_level;
    Clock clock;
  };
  Logger(std::shared_ptr<Sink> sink, nlohmann::json bound)
      : sink_(std::move(sink)), bound_(std::move(bound)) {}

  std::shared_ptr<Sink> sink_;
  nlohmann::json bound_;
};

// The process-wide logger (stderr, JSON, info until SetDefaultLogger).
const Logger& DefaultLogger();
void SetDefaultLogger(const Logger& logger);

// A random 16-hex-digit id for one reconcile pass.
std::string NewReconcileId();

}  // namespace kc::op
