// Trust between the API server and the webhook replicas: what the webhook
// configurations' caBundle holds, what a CA rotation keeps trusted, and
// whether a replica may report Ready. Pure decisions over PEM text and time
// (OpenSSL parses and verifies; nothing is read or written here).
//
// The invariant they keep (docs/webhook-serving.md, "Trust"): every
// certificate a replica may be serving chains to a CA of the caBundle, and a
// replica is Ready only while the one it serves does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "operator/webhook/certs.h"

namespace kc::webhook {

// Pure. The caBundle (concatenated PEM): `current` first (when it parses),
// then each CA of `retained` that parses, is a CA, is valid at `now`, and is
// not already in the bundle (compared as text), in order.
std::string PlanBundle(TimePoint now, const std::string& current,
                       const std::vector<std::string>& retained);

// What a CA rotation (RecreateAll) finds.
struct RotationInputs {
  std::string new_ca;                     // the CA about to be written
  std::string old_ca;                     // the Secret's ca.crt ("" when no Secret)
  std::vector<std::string> old_retained;  // the Secret's ca-previous.crt, split
  std::vector<std::string> in_bundle;     // the CAs in the configurations' caBundle now
};

// Pure. The CAs the new Secret keeps in ca-previous.crt, i.e. every CA a
// replica may still be serving a certificate of until it reloads: the old
// CA and the ones it retained, or, when the old CA is missing or unreadable
// (the Secret was deleted or damaged, so it no longer says what replicas
// loaded), the CAs in the caBundle now. Each must parse, be a CA, be valid
// at `now` and differ from `new_ca`; in that order, each once.
std::vector<std::string> RetainAtRotation(TimePoint now, const RotationInputs& in);

// A CA rotation of an existing Secret takes two passes of the leader, so
// that the API server trusts the next CA before any replica serves a
// certificate of it: announce (the next CA joins caBundle and waits in the
// Secret as ca-next.crt/ca-next.key, stamped with the time), then, once
// every webhook entry's caBundle carries it and `settle` has passed since
// the announcement (API servers learn caBundle changes from a watch),
// promote (it becomes ca.crt with a serving certificate issued by it, which
// the replicas load). Without a Secret nothing serves yet, so a new one is
// created in one pass.
enum class CaRotationStep {
  kNone,      // no rotation due
  kAnnounce,  // create the next CA, add it to caBundle, keep it in the Secret
  kWait,      // keep it in caBundle; not settled yet
  kPromote,   // make it the CA and issue the serving certificate from it
};
const char* CaRotationStepName(CaRotationStep s);

struct CaRotationState {
  bool rotation_due = false;  // Decide() said RecreateAll and the Secret exists
  bool next_usable = false;   // ca-next.crt/.key: a CA with its key, valid, far from expiry
  std::optional<TimePoint> announced_at;  // absent: no stamp (counts as settled)
  bool next_in_every_bundle = false;      // every webhook entry's caBundle has it
};

// Pure.
CaRotationStep DecideCaRotation(TimePoint now, const CaRotationState& s,
                                std::chrono::seconds settle);

// One webhook entry's caBundle, as a configuration holds it.
struct EntryBundle {
  std::string where;       // "MutatingWebhookConfiguration kc/pods.kernelcache.io"
  std::string bundle_pem;  // decoded caBundle ("" when unset)
};

struct Readiness {
  bool ready = false;
  std::string reason;  // why not ("" when ready)
};

// Pure. Whether a replica serving `served_cert_pem` ("" when none) may
// report Ready: it serves a certificate valid at `now`, and every entry of
// `entries` (the configurations that name this webhook) trusts it, i.e. it
// chains to a CA of that entry's caBundle. `entries` absent: the
// configurations could not be read, so only the certificate is checked; an
// empty list (no configuration exists) trusts nothing and demands nothing.
Readiness DecideServingReady(TimePoint now, const std::string& served_cert_pem,
                             const std::optional<std::vector<EntryBundle>>& entries);

}  // namespace kc::webhook
