// ThrottledTransport: client-side QPS/burst limiting and retries, as a
// decorator over any Transport.
//
// Contract:
// - Every attempt (Do and Stream) first takes a token from a TokenBucket
//   (kube/rate_limiter.h) of `qps`/`burst`, waiting for one if needed.
// - Do() is retried, up to `max_attempts` in all, when DecideRetry() says
//   so: 429 and 503 for any verb (the server did not act); other 5xx, and
//   connection failures / timeouts (non-OK Status from the inner transport),
//   only for idempotent verbs (GET, HEAD, PUT, DELETE, OPTIONS). The delay
//   is the server's Retry-After (seconds, capped at max_retry_after) when
//   given, otherwise initial_backoff doubling per attempt up to max_backoff.
//   After the last attempt the last response (or Status) is returned as is.
// - `on_wait`, when set, is told of every attempt (Do and Stream) before it
//   is sent: its method and how long it waited for a token (zero when one
//   was there). A caller's rate-limiter histogram; it must be cheap and must
//   not throw.
// - Stream() is rate limited but never retried: a watch is resumed by its
//   caller from the last resourceVersion.
// - Time goes through the injected Clock; waiting through the Sleeper
//   (default: Clock::SleepFor), so a test can record every delay.
// Thread-safe when the inner transport is.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "kube/clock.h"
#include "kube/rate_limiter.h"
#include "kube/transport.h"

namespace kc::kube {

// Told of each attempt's method and its wait for a token (see on_wait).
using ThrottleObserver = std::function<void(const std::string& method, Clock::Duration waited)>;

struct ThrottleOptions {
  double qps = 20;  // <= 0: unlimited
  int burst = 40;
  int max_attempts = 5;  // including the first; 1 disables retries
  Clock::Duration initial_backoff = std::chrono::milliseconds(200);
  Clock::Duration max_backoff = std::chrono::seconds(10);
  Clock::Duration max_retry_after = std::chrono::seconds(60);
  ThrottleObserver on_wait;
};

// Pure: the delay before retrying after `attempt` (1-based) produced
// `result`, or nullopt to return `result` to the caller.
std::optional<Clock::Duration> DecideRetry(const std::string& method,
                                           const StatusOr<HttpResponse>& result, int attempt,
                                           const ThrottleOptions& options);

class ThrottledTransport : public Transport {
 public:
  // Sleeps for the duration; returns false when `stop` was requested.
  using Sleeper = std::function<bool(Clock::Duration, std::stop_token)>;

  ThrottledTransport(std::shared_ptr<Transport> inner, ThrottleOptions options,
                     Clock& clock = RealClock(), Sleeper sleeper = {});

  StatusOr<HttpResponse> Do(const HttpRequest& request) override;
  Status Stream(const HttpRequest& request, std::stop_token stop,
                const std::function<bool(std::string_view line)>& on_line,
                HttpResponse* response) override;

 private:
  std::shared_ptr<Transport> inner_;
  ThrottleOptions options_;
  Sleeper sleep_;
  TokenBucket bucket_;
};

}  // namespace kc::kube
