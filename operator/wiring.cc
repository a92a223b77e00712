#include "operator/wiring.h"

#include "core/miss_channel.h"

namespace kc::op {

Settings SettingsFrom(const Config& c) {
  Settings s;
  s.initwarm_image = c.initwarm_image;
  s.image_pull_policy = c.image_pull_policy;
  s.service_account = c.warmup_service_account;
  s.pvc_binding_grace = c.pvc_binding_grace;
  s.retry_base = c.retry_base;
  s.retry_cap = c.retry_cap;
  s.warmup_priority_class = c.warmup_priority_class;
  s.unschedulable_grace = c.warmup_unschedulable_grace;
  s.operator_namespace = c.webhook_namespace;  // the release namespace (the chart)
  s.operator_service_account = c.service_account_name;
  return s;
}

ControllerOptions ControllerOptionsFrom(const Config& c, kube::Client* events_client) {
  ControllerOptions o;
  o.namespaces = c.namespaces;
  o.workers = c.workers;
  o.resync_period = c.resync_period;
  o.identity = c.identity;
  o.events_client = events_client;
  o.settings = SettingsFrom(c);
  return o;
}

webhook::InjectSettings InjectSettingsFrom(const Config& c) {
  webhook::InjectSettings s;
  s.initwarm_image = c.initwarm_image;
  s.resolve_url = c.ResolveUrl();
  s.misses_url = c.MissesUrl();
  s.miss_watcher_uid = c.miss_watcher_uid;
  s.operator_namespace = c.webhook_namespace;
  s.injector_version = kInjectorVersion;
  return s;
}

webhook::CertControllerOptions CertControllerOptionsFrom(const Config& c) {
  webhook::CertControllerOptions o;
  o.ns = c.webhook_namespace;
  o.secret_name = c.webhook_cert_secret;
  o.service_name = c.webhook_service_name;
  o.ips = c.webhook_cert_ips;
  o.mutating_config = c.webhook_mutating_config;
  o.validating_config = c.webhook_validating_config;
  o.ca_lifetime = c.webhook_ca_lifetime;
  o.serving_lifetime = c.webhook_cert_lifetime;
  o.external = c.webhook_cert_secret_external;
  o.interval = c.webhook_cert_check_interval;
  return o;
}

kube::LeaderElectionConfig LeaderElectionFrom(const Config& c) {
  kube::LeaderElectionConfig le;
  le.lease_namespace = c.lease_namespace;
  le.lease_name = c.lease_name;
  le.identity = c.identity;
  le.lease_duration = c.lease_duration;
  le.renew_deadline = c.renew_deadline;
  le.retry_period = c.retry_period;
  le.release_on_cancel = true;
  return le;
}

HttpResponse ReadyzResponse(bool synced, const std::optional<webhook::Readiness>& certs) {
  if (!synced) return HttpResponse{503, "text/plain", "informer caches not synced"};
  if (certs && !certs->ready) return HttpResponse{503, "text/plain", "webhook: " + certs->reason};
  return HttpResponse{200, "text/plain", "ok"};
}

MissIntake MissIntakeFor(Controller& controller, OperatorMetrics& metrics,
                         kube::Client& review_client, TokenReviewCache* reviews,
                         std::function<bool()> leading, const Logger& log) {
  MissIntake in;
  in.review = [&review_client](const Json& review) {
    return review_client.Create(kube::resources::kTokenReviews, "", review);
  };
  in.reviews = reviews;
  in.gated_pod = [&controller](const std::string& ns, const std::string& name) {
    return controller.GatedPod(ns, name);
  };
  in.kernelcache = [&controller](const std::string& ns, const std::string& name) {
    return controller.KernelCacheObject(ns, name);
  };
  in.ledger = &controller.misses();
  in.now = [] { return std::chrono::system_clock::now(); };
  in.leading = std::move(leading);
  in.on_record = [&controller, &metrics, log](const MissSource& src, const MissRecord& rec) {
    controller.misses().ForgetOtherDigests(src.ns, src.kernelcache, src.fingerprint,
                                           src.manifest_digest);
    int fresh = 0;
    for (const auto& [framework, n] : rec.new_for_pod) {
      metrics.CountRuntimeMisses(src.ns, src.kernelcache, src.fingerprint,
                                 core::MissFrameworkName(framework), n);
      fresh += n;
    }
    if (rec.harvest_changed) {  // a harvest may be due: Decide reads the ledger
      controller.EnqueueKernelCache(src.ns, src.kernelcache, "harvest");
    }
    if (fresh == 0 && !rec.event) return;
    log.Info("runtime misses reported", {{"namespace", src.ns},
                                         {"kernelcache", src.kernelcache},
                                         {"fingerprint", src.fingerprint},
                                         {"pod", src.pod},
                                         {"new", fresh},
                                         {"dropped", rec.dropped}});
    if (rec.event && controller.events() != nullptr) {
      if (auto kc = controller.KernelCacheObject(src.ns, src.kernelcache)) {
        controller.events()->Emit(*kc, "Warning", "RuntimeMisses",
                                  MissEventMessage(src, *rec.event));
      }
    }
    controller.EnqueueKernelCache(src.ns, src.kernelcache, "misses");
  };
  return in;
}

void RegisterHandlers(HttpServer& server, const std::set<std::string>& groups,
                      Controller& controller, OperatorMetrics& metrics,
                      const webhook::CertController* certs, const MissIntake* misses,
                      BoundedWorkers* miss_workers) {
  if (groups.count("health")) {
    server.Handle("/healthz", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "ok"};
    });
    server.Handle("/readyz", [&controller, certs](const HttpRequest&) {
      // The certificate is asked for only once the caches have synced.
      const bool synced = controller.HasSynced();
      std::optional<webhook::Readiness> r;
      if (synced && certs != nullptr) r = certs->readiness();
      return ReadyzResponse(synced, r);
    });
  }
  if (groups.count("metrics")) {
    server.Handle("/metrics", [&metrics](const HttpRequest&) {
      return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics.Render()};
    });
  }
  if (groups.count("misses") && misses != nullptr && miss_workers != nullptr) {
    server.HandlePostAsync(
        core::kMissReportPath, [misses, miss_workers, &metrics](HttpRequest req, HttpDone done) {
          HttpDone counted = [done = std::move(done), &metrics](HttpResponse r) {
            metrics.CountMissReport(r.status);
            done(std::move(r));
          };
          SubmitMissReport(std::move(req), std::move(counted), *misses, *miss_workers);
        });
  }
  if (groups.count("resolve")) {
    server.Handle("/v1/resolve", [&controller](const HttpRequest& req) {
      auto get = [&](const char* k) {
        auto it = req.query.find(k);
        return it == req.query.end() ? std::string() : it->second;
      };
      ResolveResponse r = controller.Resolve({get("namespace"), get("kernelcache"), get("node")});
      return HttpResponse{r.http_status, "application/json", r.body.dump()};
    });
  }
}

}  // namespace kc::op
