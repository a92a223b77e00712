#include "initwarm/warmup/drive.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "initwarm/fs/fsutil.h"
#include "initwarm/net/http_exchange.h"
#include "initwarm/warmup/converge.h"
#include "initwarm/warmup/drive_rules.h"
#include "initwarm/warmup/drive_staging.h"

namespace kc::initwarm {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr char kServerUnreachable[] = "; is the server's container up?";
// One readiness poll waits at most this long for its answer.
constexpr milliseconds kProbeTimeout{10000};

std::int64_t MillisSince(DriveClock::time_point start) {
  return duration_cast<milliseconds>(DriveClock::now() - start).count();
}

milliseconds Remaining(DriveClock::time_point deadline) {
  return std::max(milliseconds(1), duration_cast<milliseconds>(deadline - DriveClock::now()));
}

// One readiness poll: OK when ready, else why not.
Status PollReady(const DriveOptions& opts, milliseconds timeout) {
  if (opts.ready_path.empty()) return TcpConnect(opts.server, timeout);
  HttpCall probe;
  probe.method = "GET";
  probe.target = opts.ready_path;
  probe.unreachable_hint = kServerUnreachable;
  KC_ASSIGN_OR_RETURN(HttpReply reply, HttpExchange(opts.server, probe, timeout));
  if (IsReadyStatus(reply.status)) return OkStatus();
  return UnavailableError(HttpWhere(opts.server, probe) + " answered HTTP " +
                          std::to_string(reply.status));
}

Status WaitReady(const DriveOptions& opts, DriveClock::time_point deadline, std::ostream& log) {
  const std::string what = opts.ready_path.empty()
                               ? "a TCP connection to " + opts.server.host + ":" + opts.server.port
                               : "a 2xx from GET " + opts.ready_path;
  std::optional<DriveClock::time_point> last_logged;
  for (int polls = 1;; ++polls) {
    const auto attempt = DriveClock::now();
    Status s = PollReady(opts, std::min(kProbeTimeout, Remaining(deadline)));
    if (s.ok()) return OkStatus();
    const auto now = DriveClock::now();
    if (ShouldLogProgress(last_logged, now)) {
      log << "initwarm drive: waiting for " << what << " (poll " << polls << "): " << s.message()
          << "\n";
      last_logged = now;
    }
    const auto next = NextPoll(attempt, now, deadline, opts.poll);
    if (!next) {
      return DeadlineExceededError("the server was not ready within --timeout (waited for " + what +
                                   ", " + std::to_string(polls) + " polls; last: " + s.message() +
                                   ")");
    }
    std::this_thread::sleep_until(*next);
  }
}

HttpCall ToHttpCall(const core::WarmupCall& c) {
  HttpCall call;
  call.method = c.method;
  call.target = c.path;
  call.body = c.body;
  call.headers.assign(c.headers.begin(), c.headers.end());
  call.unreachable_hint = kServerUnreachable;
  return call;
}

Status SendCalls(const DriveOptions& opts, DriveClock::time_point deadline, std::ostream& log) {
  for (size_t i = 0; i < opts.calls.size(); ++i) {
    const core::WarmupCall& c = opts.calls[i];
    if (DriveClock::now() >= deadline) {
      return DeadlineExceededError("--timeout ran out before " + DescribeCall(i, c) + " of " +
                                   std::to_string(opts.calls.size()));
    }
    const auto start = DriveClock::now();
    auto reply = HttpExchange(opts.server, ToHttpCall(c),
                              std::min(opts.request_timeout, Remaining(deadline)));
    if (!reply.ok()) return reply.status().WithContext(DescribeCall(i, c));
    log << "initwarm drive: " << DescribeCall(i, c) << ": HTTP " << reply->status << " in "
        << MillisSince(start) << " ms\n";
    KC_RETURN_IF_ERROR(CallReplyStatus(i, c, *reply));
  }
  return OkStatus();
}

}  // namespace

namespace {

// Steps 1 to 4 once: ready, the plan, the view detached, settled.
Status DriveOnce(const DriveOptions& opts, DriveClock::time_point deadline, std::ostream& log,
                 DriveResult* r) {
  const auto start = DriveClock::now();
  KC_RETURN_IF_ERROR(WaitReady(opts, deadline, log));
  r->ready_ms = MillisSince(start);
  log << "initwarm drive: server ready after " << r->ready_ms << " ms; sending "
      << opts.calls.size() << " calls\n";
  const auto calls_start = DriveClock::now();
  KC_RETURN_IF_ERROR(SendCalls(opts, deadline, log));
  r->calls_ms = MillisSince(calls_start);
  KC_ASSIGN_OR_RETURN(DetachedView detached, DetachView(opts.view));
  r->staging = detached.staging;
  r->detached = detached.detached;
  log << "initwarm drive: view " << opts.view.string() << " detached from " << r->staging.string()
      << "\n";
  const auto settle_start = DriveClock::now();
  KC_RETURN_IF_ERROR(WaitSettled(r->staging, opts.settle, deadline));
  r->settle_ms = MillisSince(settle_start);
  log << "initwarm drive: staging settled after " << r->settle_ms << " ms\n";
  return OkStatus();
}

}  // namespace

StatusOr<DriveResult> Drive(const DriveOptions& opts, std::ostream& log) {
  const auto deadline = DriveClock::now() + opts.timeout;
  DriveResult r;
  std::optional<PassObserver> observer;
  if (opts.max_passes > 0) {
    if (!opts.restart_server) return InvalidArgumentError("no way to restart the server");
    KC_ASSIGN_OR_RETURN(const std::filesystem::path staging, StagingOfView(opts.view));
    KC_ASSIGN_OR_RETURN(PassObserver o, PassObserver::Start(staging, opts.max_passes, opts.record));
    observer.emplace(std::move(o));
  }
  while (true) {
    const auto run_start = DriveClock::now();
    KC_RETURN_IF_ERROR(DriveOnce(opts, deadline, log, &r));
    if (!observer) break;
    KC_RETURN_IF_ERROR(observer->Observe(MillisSince(run_start), 0, log).status());
    if (observer->Next() != core::PassStep::kRunPass) break;
    log << "initwarm drive: convergence pass " << observer->next_index()
        << ": restarting the server\n";
    KC_RETURN_IF_ERROR(ReplaceSymlink(r.staging, opts.view));  // the view again
    KC_RETURN_IF_ERROR(opts.restart_server());
  }
  if (observer) r.convergence = observer->record();
  log << "initwarm drive: sealing\n";
  return r;
}

}  // namespace kc::initwarm
