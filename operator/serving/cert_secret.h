// The webhook certificate Secret as the certificate controller reads and
// writes it: its fields decoded, the data and annotations a pass writes,
// the object it creates and the Event it records. Pure: JSON in, JSON out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "operator/webhook/certs.h"

namespace kc::webhook {

// The Secret's fields a pass reads (PEM; "" when absent or not base64).
struct SecretFields {
  std::string ca_pem;
  std::string ca_key_pem;
  std::string cert_pem;
  std::string key_pem;
  std::string previous_cas_pem;  // CAs replicas may still serve certs of
  std::string next_ca_pem;       // a CA rotation's announced next CA
  std::string next_ca_key_pem;
  std::optional<TimePoint> next_ca_announced;
  std::string resource_version;
};
SecretFields ReadSecretFields(const kube::Json& secret);

// What a pass writes: `data` (base64 values; null removes a key of an
// existing Secret) and `annotations` (null removes).
struct SecretWrite {
  kube::Json data = kube::Json::object();
  kube::Json annotations = kube::Json::object();
};
// A pass that issued `serving` under `ca`, keeping the CAs `retained`: the
// four keys, the previous CAs, and on an existing Secret the next CA and
// its announcement removed.
SecretWrite IssuedSecretWrite(const CertPair& ca, const CertPair& serving,
                              const std::vector<std::string>& retained, bool exists);
// A CA rotation's first pass: the next CA and when it was announced.
SecretWrite NextCaWrite(const CertPair& next, TimePoint now);

// The Secret a first pass creates (type kubernetes.io/tls, labelled as the
// operator's).
kube::Json NewSecret(const std::string& ns, const std::string& name, const kube::Json& data);
// The merge patch of an existing Secret, conditional on `resource_version`.
kube::Json SecretPatch(const std::string& resource_version, const SecretWrite& write);

// The Normal Event of a pass that issued certificates.
struct CertEvent {
  std::string reason;
  std::string message;
};
CertEvent IssuedEvent(CertAction action, const std::string& serial, const std::string& not_after);

}  // namespace kc::webhook
