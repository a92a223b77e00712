// miss_flood_bench: the miss channel's intake under a flood, with the
// latency of the other endpoints on the same listener measured beside it.
//
// An HttpServer (the operator's plain listener) serves GET /healthz and GET
// /v1/resolve (a stand-in answer of the resolve endpoint's size: the point
// is the listener's thread, not the resolve logic), and POST /v1/misses
// goes, by mode, to the same listener or a listener of its own, through the
// real intake (miss_intake.h: the checks before any API call,
// the TokenReview cache, the bounded review pool, the ledger). The
// TokenReview is a stand-in that takes --review-ms (an API server round
// trip) and authenticates only the tokens of the bench's gated pods.
// --clients threads post for --seconds a mix of reports:
//   junk     a bearer token that is not a JWT
//   stranger a JWT for kernelcache.io naming a pod that is not gated
//   forged   a JWT naming a gated pod that the review refuses (each costs a
//            review: the expensive kind)
//   valid    a gated pod's own token (reviewed once, then from the cache)
// while a prober GETs /healthz and /v1/resolve every 5 ms. In one run, in
// turn: no flood (the baseline), the intake on the listener's thread
// (HandlePost + HandleMissReport), the review pool on one listener, and the
// pool on a listener of its own (the operator's --misses-port). It prints
// per mode the answers by kind and code, the reviews made, the probes'
// p50/p99/max, and each flooded mode's /v1/resolve p99 over the baseline's.
// Prints numbers; not a test.
//   miss_flood_bench [--clients 8] [--seconds 10] [--review-ms 20] [--pods 500]
//                    [--mode quiet|inline|shared|own-port]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/gate_report.h"
#include "core/miss_channel.h"
#include "core/miss_report.h"
#include "operator/controller/miss_intake.h"
#include "operator/serving/bounded_workers.h"
#include "operator/serving/http_server.h"
#include "operator/testing/http_get.h"
#include "operator/testing/objects.h"

namespace kc::op {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kFp[] = "0123456789abcdef";
const std::string kDigest(64, 'a');

Json GatedPod(const std::string& name) {
  core::GateReport g;
  g.outcome = core::GateOutcome::kWarm;
  g.reason = "Validated";
  g.fingerprint = kFp;
  g.manifest_digest = kDigest;
  return {
      {"metadata",
       {{"name", name},
        {"namespace", "ml"},
        {"uid", "uid-" + name},
        {"labels", {{core::kConsumerLabel, "llama"}}}}},
      {"status",
       {{"initContainerStatuses",
         {{{"name", core::kGateContainer},
           {"state", {{"terminated", {{"exitCode", 0}, {"message", GateReportToJson(g)}}}}}}}}}}};
}

std::string Token(const std::string& pod, std::int64_t exp) {
  return fixtures::PodTokenJwt(fixtures::PodTokenClaims("ml", pod, "uid-" + pod, exp));
}

struct Probe {
  std::vector<double> ms;
  int failed = 0;
};

double Quantile(Probe p, double q) {
  std::sort(p.ms.begin(), p.ms.end());
  return p.ms[static_cast<size_t>(q * (p.ms.size() - 1))];
}

// quiet: no flood (the baseline); inline: the intake on the listener's
// thread; shared: the review pool, one listener; own-port: the pool, and the
// miss channel on a listener of its own (the operator's --misses-port).
enum class Mode { kQuiet, kInline, kShared, kOwnPort };
const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kQuiet:
      return "quiet (no flood)";
    case Mode::kInline:
      return "inline (intake on the I/O thread)";
    case Mode::kShared:
      return "pool, one listener";
    case Mode::kOwnPort:
      return "pool, own listener";
  }
  return "?";
}
constexpr const char* kKinds[] = {"junk", "stranger", "forged", "valid"};

struct Result {
  std::map<std::string, std::map<int, int>> answers;  // kind -> code -> count
  Probe health, resolve;
  int review_calls = 0;
  std::size_t cached = 0;
};

struct Args {
  int clients = 8;
  int seconds = 10;
  int review_ms = 20;
  int pods = 500;
  std::optional<Mode> only;  // --mode: one mode only
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (!std::strcmp(argv[i], "--clients")) a.clients = next();
    if (!std::strcmp(argv[i], "--seconds")) a.seconds = next();
    if (!std::strcmp(argv[i], "--review-ms")) a.review_ms = next();
    if (!std::strcmp(argv[i], "--pods")) a.pods = next();
    if (!std::strcmp(argv[i], "--mode") && i + 1 < argc) {
      const std::string m = argv[++i];
      a.only = m == "quiet"    ? Mode::kQuiet
               : m == "inline" ? Mode::kInline
               : m == "shared" ? Mode::kShared
                               : Mode::kOwnPort;
    }
  }
  return a;
}

std::string Summary(Probe p) {
  if (p.ms.empty()) return "no answers";
  std::sort(p.ms.begin(), p.ms.end());
  auto at = [&](double q) { return p.ms[static_cast<size_t>(q * (p.ms.size() - 1))]; };
  char buf[160];
  std::snprintf(buf, sizeof(buf), "n=%zu p50=%.2fms p99=%.2fms max=%.2fms failed=%d", p.ms.size(),
                at(0.5), at(0.99), p.ms.back(), p.failed);
  return buf;
}

int Main(int argc, char** argv) {
  const Args a = ParseArgs(argc, argv);
  const auto now = std::chrono::system_clock::now();
  const std::int64_t exp =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() + 3600;
  std::map<std::string, Json> pods;
  for (int i = 0; i < a.pods; ++i)
    pods["pod-" + std::to_string(i)] = GatedPod("pod-" + std::to_string(i));
  std::map<std::string, std::string> by_token;  // a gated pod's own token -> its name
  for (const auto& [name, pod] : pods) by_token[Token(name, exp)] = name;
  const Json kc = {{"metadata", {{"name", "llama"}, {"namespace", "ml"}}},
                   {"status", {{"fingerprints", {{{"id", kFp}, {"manifestDigest", kDigest}}}}}}};

  // One mode's run: its own ledger, review cache, pool and listener(s).
  auto run = [&](Mode mode) {
    MissLedger ledger;
    TokenReviewCache reviews;
    std::atomic<int> review_calls{0};
    MissIntake intake;
    intake.review = [&](const Json& req) -> StatusOr<Json> {
      ++review_calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(a.review_ms));  // the API round trip
      const std::string token = req["spec"]["token"];
      if (auto it = by_token.find(token); it != by_token.end()) {
        const std::string& name = it->second;
        return Json{
            {"status",
             {{"authenticated", true},
              {"audiences", {core::kMissTokenAudience}},
              {"user",
               {{"username", "system:serviceaccount:ml:default"},
                {"extra",
                 {{core::kPodNameExtra, {name}}, {core::kPodUidExtra, {"uid-" + name}}}}}}}}};
      }
      return Json{{"status", {{"authenticated", false}, {"error", "invalid signature"}}}};
    };
    intake.reviews = &reviews;
    intake.gated_pod = [&](const std::string& ns, const std::string& name) -> std::optional<Json> {
      auto it = pods.find(name);
      if (ns != "ml" || it == pods.end()) return std::nullopt;
      return it->second;
    };
    intake.kernelcache = [&](const std::string&, const std::string& name) -> std::optional<Json> {
      if (name != "llama") return std::nullopt;
      return kc;
    };
    intake.ledger = &ledger;
    intake.now = [] { return std::chrono::system_clock::now(); };

    Result out;
    auto server = HttpServer::Listen("127.0.0.1", 0);
    auto own = HttpServer::Listen("127.0.0.1", 0);  // the miss channel's own listener
    if (!server.ok() || !own.ok()) {
      std::fprintf(stderr, "cannot listen\n");
      return out;
    }
    (*server)->Handle("/healthz", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "ok"};
    });
    (*server)->Handle("/v1/resolve", [](const HttpRequest&) {
      return HttpResponse{200, "application/json", std::string(600, ' ')};
    });
    BoundedWorkers workers(kMissReviewThreads, kMissReviewQueue);
    HttpServer& intake_server = mode == Mode::kOwnPort ? **own : **server;
    if (mode == Mode::kInline) {
      intake_server.HandlePost(core::kMissReportPath, [&](const HttpRequest& req) {
        return HandleMissReport(req, intake);
      });
    } else {
      intake_server.HandlePostAsync(core::kMissReportPath, [&](HttpRequest req, HttpDone done) {
        SubmitMissReport(std::move(req), std::move(done), intake, workers);
      });
    }
    (*server)->Start();
    (*own)->Start();
    const int port = (*server)->port();
    const int intake_port = intake_server.port();

    const std::string body = core::MissReportToJson(
        {kFp, {{core::MissFramework::kTriton, "K", "kernel add", 8, 100}}, std::nullopt});
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int c = 0; mode != Mode::kQuiet && c < a.clients; ++c) {
      clients.emplace_back([&, c] {
        std::map<std::string, std::map<int, int>> mine;
        for (int i = 0; !stop; ++i) {
          const int kind = (i + c) % 4;
          const std::string pod = "pod-" + std::to_string((i * 7 + c) % a.pods);
          std::string auth = "Bearer ";
          if (kind == 0) auth += "junk-" + std::to_string(i);
          if (kind == 1) auth += Token("stranger-" + std::to_string(i), exp);
          if (kind == 2) auth += Token(pod, exp) + "x";  // a gated pod's claims, a bad signature
          if (kind == 3) auth += Token(pod, exp);
          auto r = HttpPost("127.0.0.1", intake_port, core::kMissReportPath, body, auth);
          ++mine[kKinds[kind]][r.ok() ? r->status : -1];
        }
        std::lock_guard l(mu);
        for (auto& [k, codes] : mine) {
          for (auto& [code, n] : codes) out.answers[k][code] += n;
        }
      });
    }
    const auto end = Clock::now() + std::chrono::seconds(a.seconds);
    while (Clock::now() < end) {
      for (auto [target, probe] :
           {std::pair{"/healthz", &out.health}, {"/v1/resolve", &out.resolve}}) {
        const auto t0 = Clock::now();
        auto r = HttpGet("127.0.0.1", port, target);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (r.ok() && r->status == 200) {
          probe->ms.push_back(ms);
        } else {
          ++probe->failed;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop = true;
    for (auto& t : clients) t.join();
    workers.Stop();
    (*server)->Stop();
    (*own)->Stop();
    out.review_calls = review_calls.load();
    out.cached = reviews.size();
    return out;
  };

  std::printf("clients=%d seconds=%d review_ms=%d pods=%d (one run, the modes in turn)\n",
              a.clients, a.seconds, a.review_ms, a.pods);
  std::map<Mode, Result> results;
  for (Mode m : {Mode::kQuiet, Mode::kInline, Mode::kShared, Mode::kOwnPort}) {
    if (a.only && *a.only != m) continue;
    results[m] = run(m);
    const Result& r = results[m];
    std::printf("%s\n", ModeName(m));
    for (const auto& [kind, codes] : r.answers) {
      std::printf("  %-8s", kind.c_str());
      int total = 0;
      for (const auto& [code, n] : codes) {
        std::printf(" %d:%d", code, n);
        total += n;
      }
      std::printf("  (%.0f/s)\n", total / static_cast<double>(a.seconds));
    }
    std::printf("  TokenReviews made: %d; cached identities: %zu\n", r.review_calls, r.cached);
    std::printf("  GET /healthz     %s\n", Summary(r.health).c_str());
    std::printf("  GET /v1/resolve  %s\n", Summary(r.resolve).c_str());
  }
  // Side by side: each flooded mode's /v1/resolve p99 over the quiet one's.
  if (results.count(Mode::kQuiet) && !results[Mode::kQuiet].resolve.ms.empty()) {
    const double quiet = Quantile(results[Mode::kQuiet].resolve, 0.99);
    for (const auto& [m, r] : results) {
      if (m == Mode::kQuiet || r.resolve.ms.empty()) continue;
      std::printf("ratio %-28s /v1/resolve p99 %.1fx quiet (%.2f ms / %.2f ms)\n", ModeName(m),
                  Quantile(r.resolve, 0.99) / quiet, Quantile(r.resolve, 0.99), quiet);
    }
  }
  return 0;
}

}  // namespace
}  // namespace kc::op

int main(int argc, char** argv) { return kc::op::Main(argc, argv); }
