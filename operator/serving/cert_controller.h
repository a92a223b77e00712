// CertController: the webhook's certificates, kept in one Secret.
//
// Leader (Reconcile): reads the Secret (ca.crt, ca.key, tls.crt, tls.key,
// ca-previous.crt, ca-next.crt/.key), asks certs.h Decide() what to do,
// writes a new CA and/or serving pair when needed, logs and emits a Normal
// Event on the Secret, then writes trust.h PlanBundle() (the Secret's CA,
// then the retained previous CAs still valid) into clientConfig.caBundle of
// every webhook entry of the operator's OWN Mutating- and
// ValidatingWebhookConfiguration (by name; one JSON Patch with a
// resourceVersion test, only when an entry differs). A missing configuration
// is logged, not an error: it is retried every interval (a `helm upgrade`
// that blanks caBundle is repaired the same way). Writing the Secret:
// - no Secret: create it (the caBundle follows). AlreadyExists means another
//   replica created it first: adopt that one (read it again), never replace
//   it;
// - renewal: a JSON merge patch carrying metadata.resourceVersion; Conflict
//   means the Secret changed under us: adopt it as above;
// - a CA rotation: two passes (trust.h DecideCaRotation): announce the next
//   CA (caBundle first, then ca-next.* in the Secret), promote it once every
//   caBundle has carried it for `ca_rotation_settle`; the CAs replicas may
//   still serve (trust.h RetainAtRotation, kept in ca-previous.crt) stay in
//   caBundle until they expire.
// External mode (cert-manager): no generation and no caBundle writes.
//
// Every replica (Reload): reads the Secret and hands a changed tls.crt/key
// pair to `on_serving` (the HTTPS server's SetCertificate), so renewals reach
// every replica without a restart. Then (CheckServing) it reads the
// caBundles of the same configurations and decides with trust.h
// DecideServingReady() whether the certificate it serves is trusted by all
// of them; readiness() is what /readyz reports for the webhook.
//
// Run() does both every `interval` (every `not_ready_interval` while this
// replica is not Ready, and at once after Kick()): Reconcile while
// `is_leader()` (and not external), then Reload and CheckServing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "operator/serving/cert_secret.h"
#include "operator/serving/logging.h"
#include "operator/webhook/certs.h"
#include "operator/webhook/trust.h"

namespace kc::webhook {

inline constexpr char kCaPrivateKeyKey[] = "ca.key";
// The CAs before the last CA rotation (PEM, one or more); caBundle trusts
// each until it expires.
inline constexpr char kPreviousCaKey[] = "ca-previous.crt";
// A CA rotation in progress (trust.h CaRotationStep): the next CA, in
// caBundle but not serving yet, and when it was announced (RFC 3339).
inline constexpr char kNextCaKey[] = "ca-next.crt";
inline constexpr char kNextCaPrivateKeyKey[] = "ca-next.key";
inline constexpr char kNextCaAnnouncedAnnotation[] = "kernelcache.io/ca-next-announced";

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
  // While this replica is not Ready (no certificate yet, or one the
  // caBundle does not trust): how soon Run looks again.
  std::chrono::milliseconds not_ready_interval{1000};
  // A CA rotation promotes the next CA no sooner than this after announcing
  // it in caBundle (and only once every entry carries it).
  std::chrono::seconds ca_rotation_settle{5};
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

  // Leader, once. Returns what Decide() asked for after any adoption of
  // another replica's concurrent write (RecreateAll for each pass of a CA
  // rotation of an existing Secret, which completes over two).
  StatusOr<CertAction> Reconcile(TimePoint now);
  // Any replica, once. OK when the Secret's pair is loaded (or unchanged);
  // NotFound while the Secret does not exist yet.
  Status Reload();
  // Any replica, once: reads the configurations' caBundles and decides
  // whether the loaded certificate is trusted (trust.h
  // DecideServingReady); the verdict is what readiness() returns after.
  Readiness CheckServing(TimePoint now);
  // Not ready until CheckServing said otherwise.
  Readiness readiness() const;
  // Makes Run do its next pass now (e.g. this replica just became leader).
  void Kick();
  void Run(const std::stop_token& stop, const std::function<bool()>& is_leader);

  // Serial of the pair last handed to on_serving ("" before the first).
  std::string loaded_serial() const;

 private:
  // One pass over the Secret: ReconcileOnce reads it and decides; the steps
  // below carry the decision out.
  struct SecretPass {
    TimePoint now;
    bool may_adopt = true;
    bool exists = false;
    kube::Json secret;
    SecretFields fields;
    CertAction action = CertAction::kKeep;
    // What the pass returns: `action`, or what adopting another replica's
    // concurrent write returned.
    StatusOr<CertAction> result = CertAction::kKeep;
  };
  StatusOr<CertAction> ReconcileOnce(TimePoint now, bool may_adopt);
  // RecreateAll of an existing Secret, one step of the CA rotation
  // (announce, wait, promote; trust.h DecideCaRotation). True when the next
  // CA was promoted into `ca` and the pass goes on to issue; false when this
  // pass is done (it returns pass.result).
  StatusOr<bool> RotateCa(SecretPass& pass, const CertWanted& wanted, CertPair* ca,
                          std::vector<std::string>* retained);
  // Issues the serving certificate under `ca`, writes the Secret, records
  // the Event and writes the caBundles.
  StatusOr<CertAction> IssueServing(SecretPass& pass, const CertWanted& wanted, const CertPair& ca,
                                    const std::vector<std::string>& retained);
  // A conditional write of the Secret (create, or a merge patch carrying the
  // resourceVersion read); nullopt when another replica wrote it first and
  // this pass adopted that (pass.result holds the adopting pass's result).
  StatusOr<std::optional<kube::Json>> WriteSecret(SecretPass& pass, const SecretWrite& write);
  std::string SecretRef() const;  // "<ns>/<name>" of the Secret
  // The caBundle of every webhook entry of the named configurations (a
  // missing configuration contributes none).
  StatusOr<std::vector<EntryBundle>> ObserveBundles();
  Status WriteCaBundle(const kube::Resource& r, const std::string& name, const std::string& ca_pem);
  Status WriteCaBundles(const std::string& bundle_pem);

  kube::Client& client_;
  CertControllerOptions options_;
  op::Logger logger_;
  ServingCertSink on_serving_;
  CertEventSink on_event_;
  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  bool kicked_ = false;
  std::string loaded_cert_;
  std::string loaded_serial_;
  Readiness readiness_{false, "no serving certificate loaded yet"};
  bool warned_missing_config_ = false;
  bool warned_unreadable_config_ = false;
};

}  // namespace kc::webhook
