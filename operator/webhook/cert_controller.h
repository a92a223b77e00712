// CertController: the webhook's certificates, kept in one Secret.
//
// Leader (Reconcile): reads the Secret (ca.crt, ca.key, tls.crt, tls.key),
// asks certs.h Decide() what to do, writes a new CA and/or serving pair when
// needed (on a new CA, caBundle first: new CA plus the previous one while it
// is valid, kept in ca-previous.crt; then the Secret by a
// JSON merge patch carrying metadata.resourceVersion, so a
// concurrent writer makes it fail with Conflict rather than lose data; or a
// create), logs and emits a Normal Event on the Secret, then writes the CA
// into clientConfig.caBundle of every webhook entry of the operator's OWN
// Mutating- and ValidatingWebhookConfiguration (by name; one JSON Patch with
// a resourceVersion test, only when an entry differs). A missing
// configuration is logged, not an error: it is retried every interval (a
// `helm upgrade` that blanks caBundle is repaired the same way).
// External mode (cert-manager): no generation and no caBundle writes.
//
// Every replica (Reload): reads the Secret and hands a changed tls.crt/key
// pair to `on_serving` (the HTTPS server's SetCertificate), so renewals reach
// every replica without a restart.
//
// Run() does both every `interval`: Reconcile while `is_leader()` (and not
// external), then Reload.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "operator/logging.h"
#include "operator/webhook/certs.h"

namespace kc::webhook {

inline constexpr char kCaPrivateKeyKey[] = "ca.key";
// The CA before the last CA rotation; caBundle trusts it until it expires.
inline constexpr char kPreviousCaKey[] = "ca-previous.crt";

struct CertControllerOptions {
  std::string ns = "kernelcache-system";  // the Secret's (operator's) namespace
  std::string secret_name = "kernelcache-webhook-tls";
  std::string service_name = "kernelcache-webhook";  // DNS names of the serving cert
  std::vector<std::string> ips;                      // IP SANs (e.g. 127.0.0.1 in tests)
  std::string mutating_config;                       // empty: none
  std::string validating_config;                     // empty: none
  std::chrono::seconds ca_lifetime{std::chrono::hours(24 * 3650)};
  std::chrono::seconds serving_lifetime{std::chrono::hours(24 * 90)};
  bool external = false;  // the Secret is cert-manager's: read only
  std::chrono::seconds interval{10};
};

// Called with a serving pair that differs from the last one; returns whether
// the server took it (a rejected pair is offered again next time).
using ServingCertSink = std::function<Status(const CertPair& pair)>;
// A Normal Event on `involved` (the Secret).
using CertEventSink = std::function<void(const kube::Json& involved, const std::string& reason,
                                         const std::string& message)>;

class CertController {
 public:
  CertController(kube::Client& client, CertControllerOptions options, op::Logger logger,
                 ServingCertSink on_serving, CertEventSink on_event = nullptr);

  // Leader, once. Returns the action taken on the Secret.
  StatusOr<CertAction> Reconcile(TimePoint now);
  // Any replica, once. OK when the Secret's pair is loaded (or unchanged);
  // NotFound while the Secret does not exist yet.
  Status Reload();
  void Run(const std::stop_token& stop, const std::function<bool()>& is_leader);

  // Serial of the pair last handed to on_serving ("" before the first).
  std::string loaded_serial() const;

 private:
  Status WriteCaBundle(const kube::Resource& r, const std::string& name, const std::string& ca_pem);
  Status WriteCaBundles(const std::string& bundle_pem);

  kube::Client& client_;
  CertControllerOptions options_;
  op::Logger logger_;
  ServingCertSink on_serving_;
  CertEventSink on_event_;
  mutable std::mutex mu_;
  std::string loaded_cert_;
  std::string loaded_serial_;
  bool warned_missing_config_ = false;
};

}  // namespace kc::webhook
