#include "kube/throttled_transport.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

namespace kc::kube {
namespace {

bool Idempotent(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS";
}

std::optional<Clock::Duration> RetryAfter(const HttpResponse& response) {
  auto it = response.headers.find("retry-after");
  if (it == response.headers.end()) return std::nullopt;
  const std::string& v = it->second;
  if (v.empty() || v.find_first_not_of("0123456789 ") != std::string::npos) return std::nullopt;
  // At most an hour: a huge value would overflow the clock (strtoll
  // saturates at LLONG_MAX seconds).
  return std::chrono::seconds(std::min<long long>(std::strtoll(v.c_str(), nullptr, 10), 3600));
}

}  // namespace

std::optional<Clock::Duration> DecideRetry(const std::string& method,
                                           const StatusOr<HttpResponse>& result, int attempt,
                                           const ThrottleOptions& options) {
  if (attempt >= options.max_attempts) return std::nullopt;
  bool retry = false;
  std::optional<Clock::Duration> server_delay;
  if (!result.ok()) {
    const StatusCode code = result.status().code();
    retry = Idempotent(method) &&
            (code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded);
  } else {
    const int status = result->status;
    if (status == 429 || status == 503) {
      retry = true;
    } else if (status >= 500 && status <= 599 && status != 501) {
      retry = Idempotent(method);
    }
    if (retry) server_delay = RetryAfter(*result);
  }
  if (!retry) return std::nullopt;
  if (server_delay) return std::min(*server_delay, options.max_retry_after);
  Clock::Duration delay = options.initial_backoff;
  for (int i = 1; i < attempt && delay < options.max_backoff; ++i) delay *= 2;
  return std::min(delay, options.max_backoff);
}

ThrottledTransport::ThrottledTransport(std::shared_ptr<Transport> inner, ThrottleOptions options,
                                       Clock& clock, Sleeper sleeper)
    : inner_(std::move(inner)),
      options_(std::move(options)),
      sleep_(std::move(sleeper)),
      bucket_(options_.qps, options_.burst, clock) {
  if (!sleep_) {
    sleep_ = [&clock](Clock::Duration d, std::stop_token stop) {
      return clock.SleepFor(d, std::move(stop));
    };
  }
}

StatusOr<HttpResponse> ThrottledTransport::Do(const HttpRequest& request) {
  for (int attempt = 1;; ++attempt) {
    const Clock::Duration wait = bucket_.Reserve();
    if (options_.on_wait) options_.on_wait(request.method, wait);
    if (wait > Clock::Duration::zero()) sleep_(wait, {});
    StatusOr<HttpResponse> result = inner_->Do(request);
    std::optional<Clock::Duration> delay = DecideRetry(request.method, result, attempt, options_);
    if (!delay) return result;
    sleep_(*delay, {});
  }
}

Status ThrottledTransport::Stream(const HttpRequest& request, std::stop_token stop,
                                  const std::function<bool(std::string_view line)>& on_line,
                                  HttpResponse* response) {
  const Clock::Duration wait = bucket_.Reserve();
  if (options_.on_wait) options_.on_wait(request.method, wait);
  if (wait > Clock::Duration::zero() && !sleep_(wait, stop)) {
    return CancelledError("stream cancelled while rate limited");
  }
  return inner_->Stream(request, std::move(stop), on_line, response);
}

}  // namespace kc::kube
