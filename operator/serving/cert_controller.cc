#include "operator/serving/cert_controller.h"

#include <algorithm>

#include "api/meta.h"
#include "api/time.h"
#include "base/base64.h"
#include "kube/config.h"
#include "operator/serving/cert_secret.h"

namespace kc::webhook {
namespace {

using Json = kube::Json;

// Every CA in the observed caBundles, each once, in order.
std::vector<std::string> AllCas(const StatusOr<std::vector<EntryBundle>>& observed) {
  std::vector<std::string> out;
  if (!observed.ok()) return out;
  for (const EntryBundle& e : *observed) {
    for (std::string& c : SplitPemCerts(e.bundle_pem)) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
    }
  }
  return out;
}

// Every observed entry's caBundle holds `ca_pem`.
bool EveryEntryHas(const StatusOr<std::vector<EntryBundle>>& observed, const std::string& ca_pem) {
  if (!observed.ok()) return false;
  for (const EntryBundle& e : *observed) {
    const auto cas = SplitPemCerts(e.bundle_pem);
    if (std::find(cas.begin(), cas.end(), ca_pem) == cas.end()) return false;
  }
  return true;
}

// A next CA that Decide() would keep: a CA with its key, valid, far from
// expiry.
bool UsableCa(const CertPair& ca, TimePoint now, const CertWanted& wanted) {
  SecretState st = InspectSecret(ca.cert_pem, "", "", now);
  if (!st.ca || !CheckKeyMatches(ca.cert_pem, ca.key_pem).ok()) return false;
  return Decide(now, st, wanted) != CertAction::kRecreateAll;
}

}  // namespace

CertController::CertController(kube::Client& client, CertControllerOptions options,
                               op::Logger logger, ServingCertSink on_serving,
                               CertEventSink on_event)
    : client_(client),
      options_(std::move(options)),
      logger_(std::move(logger)),
      on_serving_(std::move(on_serving)),
      on_event_(std::move(on_event)) {}

StatusOr<CertAction> CertController::Reconcile(TimePoint now) {
  return ReconcileOnce(now, /*may_adopt=*/true);
}

StatusOr<CertAction> CertController::ReconcileOnce(TimePoint now, bool may_adopt) {
  auto got = client_.Get(kube::resources::kSecrets, options_.ns, options_.secret_name);
  if (!got.ok() && !IsNotFound(got.status())) return got.status();
  SecretPass pass;
  pass.now = now;
  pass.may_adopt = may_adopt;
  pass.exists = got.ok();
  pass.secret = pass.exists ? *got : Json::object();
  pass.fields = ReadSecretFields(pass.secret);
  const SecretFields& f = pass.fields;
  const CertWanted wanted{ServiceDnsNames(options_.service_name, options_.ns), options_.ips};
  SecretState state = InspectSecret(f.ca_pem, f.cert_pem, f.key_pem, now);
  if (state.ca && !CheckKeyMatches(f.ca_pem, f.ca_key_pem).ok()) state.ca.reset();  // CA key lost
  pass.action = Decide(now, state, wanted);
  pass.result = pass.action;
  // The CAs besides the current one that replicas may still serve certs of.
  std::vector<std::string> retained = SplitPemCerts(f.previous_cas_pem);
  if (pass.action == CertAction::kKeep) {
    KC_RETURN_IF_ERROR(WriteCaBundles(PlanBundle(now, f.ca_pem, retained)));
    return pass.action;
  }
  CertPair ca{f.ca_pem, f.ca_key_pem};
  if (pass.action == CertAction::kRecreateAll && !pass.exists) {
    // Nothing serves a cert of this Secret yet: create it in one pass. The
    // caBundle follows the create, so a replica losing the race to create
    // never announces a CA nobody will serve.
    KC_ASSIGN_OR_RETURN(ca, CreateCa("kernelcache-webhook-ca", now, options_.ca_lifetime));
    retained = RetainAtRotation(now, {ca.cert_pem, "", {}, AllCas(ObserveBundles())});
  } else if (pass.action == CertAction::kRecreateAll) {
    KC_ASSIGN_OR_RETURN(const bool promoted, RotateCa(pass, wanted, &ca, &retained));
    if (!promoted) return pass.result;
  }
  return IssueServing(pass, wanted, ca, retained);
}

StatusOr<bool> CertController::RotateCa(SecretPass& pass, const CertWanted& wanted, CertPair* ca,
                                        std::vector<std::string>* retained) {
  const TimePoint now = pass.now;
  const SecretFields& f = pass.fields;
  CertPair next{f.next_ca_pem, f.next_ca_key_pem};
  const auto observed = ObserveBundles();
  const CaRotationState rs{true, UsableCa(next, now, wanted), f.next_ca_announced,
                           EveryEntryHas(observed, next.cert_pem)};
  const CaRotationStep step = DecideCaRotation(now, rs, options_.ca_rotation_settle);
  if (step == CaRotationStep::kAnnounce) {
    KC_ASSIGN_OR_RETURN(next, CreateCa("kernelcache-webhook-ca", now, options_.ca_lifetime));
  }
  if (step != CaRotationStep::kPromote) {
    // The API server trusts the next CA (and still the current and
    // retained ones) before any replica can serve a cert of it.
    std::vector<std::string> trusted = {next.cert_pem};
    trusted.insert(trusted.end(), retained->begin(), retained->end());
    KC_RETURN_IF_ERROR(WriteCaBundles(PlanBundle(now, f.ca_pem, trusted)));
  }
  if (step == CaRotationStep::kWait) return false;
  if (step == CaRotationStep::kAnnounce) {
    KC_ASSIGN_OR_RETURN(auto written, WriteSecret(pass, NextCaWrite(next, now)));
    if (written) {
      logger_.Info("webhook CA rotation: next CA announced in caBundle",
                   {{"secret", SecretRef()},
                    {"serial", ParseCert(next.cert_pem)->serial_hex},
                    {"promoteAfter", options_.ca_rotation_settle.count()}});
    }
    return false;
  }
  *ca = next;  // promote
  *retained = RetainAtRotation(now, {ca->cert_pem, f.ca_pem, *retained, AllCas(observed)});
  return true;
}

StatusOr<CertAction> CertController::IssueServing(SecretPass& pass, const CertWanted& wanted,
                                                  const CertPair& ca,
                                                  const std::vector<std::string>& retained) {
  KC_ASSIGN_OR_RETURN(
      CertPair serving,
      IssueServingCert(ca, {wanted.dns_names, wanted.ips, options_.serving_lifetime}, pass.now));
  KC_ASSIGN_OR_RETURN(auto written,
                      WriteSecret(pass, IssuedSecretWrite(ca, serving, retained, pass.exists)));
  if (!written) return pass.result;
  auto info = ParseCert(serving.cert_pem);
  const std::string serial = info.ok() ? info->serial_hex : "";
  const std::string not_after = info.ok() ? api::FormatTime(info->not_after) : "";
  logger_.Info("webhook certificate " + std::string(CertActionName(pass.action)),
               {{"secret", SecretRef()},
                {"serial", serial},
                {"notAfter", not_after},
                {"retainedCas", retained.size()}});
  if (on_event_) {
    const CertEvent e = IssuedEvent(pass.action, serial, not_after);
    on_event_(*written, e.reason, e.message);
  }
  KC_RETURN_IF_ERROR(WriteCaBundles(PlanBundle(pass.now, ca.cert_pem, retained)));
  return pass.action;
}

StatusOr<std::optional<Json>> CertController::WriteSecret(SecretPass& pass,
                                                          const SecretWrite& write) {
  const auto& secrets = kube::resources::kSecrets;
  StatusOr<Json> written =
      pass.exists
          ? client_.Patch(secrets, options_.ns, options_.secret_name, kube::PatchType::kMerge,
                          SecretPatch(pass.fields.resource_version, write))
          : client_.Create(secrets, options_.ns,
                           NewSecret(options_.ns, options_.secret_name, write.data));
  if (pass.may_adopt && (IsAlreadyExists(written.status()) || IsConflict(written.status()))) {
    // Another replica (a leader overlapping this one at a hand-over) wrote
    // the Secret since it was read: adopt its certificates rather than
    // replace the ones replicas may be loading now.
    logger_.Info("webhook certificate Secret written by another replica; adopting it",
                 {{"secret", SecretRef()}, {"wanted", CertActionName(pass.action)}});
    pass.result = ReconcileOnce(pass.now, /*may_adopt=*/false);
    return std::optional<Json>();
  }
  if (!written.ok()) return written.status().WithContext("write Secret " + options_.secret_name);
  return std::optional<Json>(*written);
}

std::string CertController::SecretRef() const { return options_.ns + "/" + options_.secret_name; }

StatusOr<std::vector<EntryBundle>> CertController::ObserveBundles() {
  std::vector<EntryBundle> out;
  const std::pair<const kube::Resource*, const std::string*> configs[] = {
      {&kube::resources::kMutatingWebhookConfigurations, &options_.mutating_config},
      {&kube::resources::kValidatingWebhookConfigurations, &options_.validating_config}};
  for (const auto& [r, name] : configs) {
    if (name->empty()) continue;
    auto config = client_.Get(*r, "", *name);
    if (IsNotFound(config.status())) continue;
    if (!config.ok()) return config.status().WithContext(r->kind + " " + *name);
    const Json& webhooks = config->value("webhooks", Json::array());
    for (size_t i = 0; webhooks.is_array() && i < webhooks.size(); ++i) {
      const Json& cc = webhooks[i].value("clientConfig", Json::object());
      std::string bundle;
      if (cc.is_object() && cc.contains("caBundle") && cc["caBundle"].is_string()) {
        auto decoded = kc::DecodeBase64(cc["caBundle"].get<std::string>());
        if (decoded.ok()) bundle = *decoded;
      }
      out.push_back(
          {r->kind + " " + *name + "/" + webhooks[i].value("name", std::to_string(i)), bundle});
    }
  }
  return out;
}

Status CertController::WriteCaBundles(const std::string& bundle_pem) {
  if (!options_.mutating_config.empty()) {
    KC_RETURN_IF_ERROR(WriteCaBundle(kube::resources::kMutatingWebhookConfigurations,
                                     options_.mutating_config, bundle_pem));
  }
  if (!options_.validating_config.empty()) {
    KC_RETURN_IF_ERROR(WriteCaBundle(kube::resources::kValidatingWebhookConfigurations,
                                     options_.validating_config, bundle_pem));
  }
  return OkStatus();
}

Status CertController::WriteCaBundle(const kube::Resource& r, const std::string& name,
                                     const std::string& ca_pem) {
  auto config = client_.Get(r, "", name);
  if (IsNotFound(config.status())) {
    bool warn = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      warn = !warned_missing_config_;
      warned_missing_config_ = true;
    }
    if (warn) {
      logger_.Warn("webhook configuration not found; caBundle not written yet",
                   {{"kind", r.kind}, {"name", name}});
    }
    return OkStatus();
  }
  if (!config.ok()) return config.status().WithContext(r.kind + " " + name);
  const std::string bundle = kc::EncodeBase64(ca_pem);
  Json ops = Json::array();
  const Json& webhooks = config->value("webhooks", Json::array());
  for (size_t i = 0; webhooks.is_array() && i < webhooks.size(); ++i) {
    const Json& cc = webhooks[i].value("clientConfig", Json::object());
    if (cc.is_object() && cc.value("caBundle", "") == bundle) continue;
    ops.push_back({{"op", "add"},
                   {"path", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle"},
                   {"value", bundle}});
  }
  if (ops.empty()) return OkStatus();
  ops.insert(ops.begin(), Json{{"op", "test"},
                               {"path", "/metadata/resourceVersion"},
                               {"value", api::MetaString(*config, "resourceVersion")}});
  auto patched = client_.Patch(r, "", name, kube::PatchType::kJsonPatch, ops);
  if (!patched.ok()) return patched.status().WithContext("caBundle of " + r.kind + " " + name);
  logger_.Info("webhook caBundle written",
               {{"kind", r.kind}, {"name", name}, {"webhooks", ops.size() - 1}});
  return OkStatus();
}

Status CertController::Reload() {
  auto got = client_.Get(kube::resources::kSecrets, options_.ns, options_.secret_name);
  if (!got.ok()) return got.status();
  const SecretFields f = ReadSecretFields(*got);
  CertPair pair{f.cert_pem, f.key_pem};
  if (pair.cert_pem.empty() || pair.key_pem.empty()) {
    return FailedPreconditionError("Secret " + options_.secret_name + " has no tls.crt/tls.key");
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    if (pair.cert_pem == loaded_cert_) return OkStatus();
  }
  KC_RETURN_IF_ERROR(on_serving_(pair));
  auto info = ParseCert(pair.cert_pem);
  const std::string serial = info.ok() ? info->serial_hex : "";
  {
    std::lock_guard<std::mutex> l(mu_);
    loaded_cert_ = pair.cert_pem;
    loaded_serial_ = serial;
  }
  logger_.Info(
      "webhook serving certificate loaded",
      {{"serial", serial}, {"notAfter", info.ok() ? api::FormatTime(info->not_after) : ""}});
  return OkStatus();
}

std::string CertController::loaded_serial() const {
  std::lock_guard<std::mutex> l(mu_);
  return loaded_serial_;
}

Readiness CertController::CheckServing(TimePoint now) {
  std::string served;
  {
    std::lock_guard<std::mutex> l(mu_);
    served = loaded_cert_;
  }
  std::optional<std::vector<EntryBundle>> entries;
  if (!served.empty()) {  // nothing to check a missing certificate against
    auto observed = ObserveBundles();
    if (observed.ok()) {
      entries = std::move(*observed);
    } else {
      bool warn = false;
      {
        std::lock_guard<std::mutex> l(mu_);
        warn = !warned_unreadable_config_;
        warned_unreadable_config_ = true;
      }
      if (warn) {
        logger_.Warn("webhook configurations unreadable; readiness checks the certificate only",
                     {{"error", observed.status().ToString()}});
      }
    }
  }
  const Readiness r = DecideServingReady(now, served, entries);
  bool changed = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    changed = r.ready != readiness_.ready || r.reason != readiness_.reason;
    readiness_ = r;
  }
  if (changed) {
    if (r.ready) {
      logger_.Info("webhook serving certificate trusted; ready", {{"serial", loaded_serial()}});
    } else {
      logger_.Info("webhook not ready", {{"reason", r.reason}});
    }
  }
  return r;
}

Readiness CertController::readiness() const {
  std::lock_guard<std::mutex> l(mu_);
  return readiness_;
}

void CertController::Kick() {
  std::lock_guard<std::mutex> l(mu_);
  kicked_ = true;
  wake_.notify_all();
}

void CertController::Run(const std::stop_token& stop, const std::function<bool()>& is_leader) {
  std::string last_error;
  while (!stop.stop_requested()) {
    {
      std::lock_guard<std::mutex> l(mu_);
      kicked_ = false;
    }
    Status s = OkStatus();
    if (!options_.external && is_leader && is_leader()) {
      auto r = Reconcile(std::chrono::system_clock::now());
      if (!r.ok()) s = r.status();
    }
    Status reload = Reload();
    if (s.ok() && !reload.ok() && !(IsNotFound(reload) && !options_.external)) s = reload;
    if (IsNotFound(reload) && options_.external) s = reload;
    const bool ready = CheckServing(std::chrono::system_clock::now()).ready;
    const std::string err = s.ok() ? "" : s.ToString();
    if (err != last_error && !err.empty()) logger_.Warn("webhook certificates", {{"error", err}});
    last_error = err;
    const auto wait =
        ready ? std::chrono::duration_cast<std::chrono::milliseconds>(options_.interval)
              : std::min(options_.not_ready_interval,
                         std::chrono::duration_cast<std::chrono::milliseconds>(options_.interval));
    std::unique_lock<std::mutex> l(mu_);
    wake_.wait_for(l, stop, wait, [this] { return kicked_; });
  }
}

}  // namespace kc::webhook
