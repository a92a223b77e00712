// Certificates the operator manages for its webhooks (OpenSSL 3, EVP APIs):
// a self-signed CA, a serving certificate it issues for the Service DNS
// names (and optional IPs), PEM in and out, and the pure decision of what to
// do with what a Secret holds.
//
// Keys are ECDSA P-256; signatures SHA-256; serials 128 random bits.
// notBefore is backdated by a tenth of the lifetime (at most 5 minutes) for
// clock skew between the operator and the API server.
// Nothing throws; OpenSSL failures come back as Internal with its reason.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::webhook {

using TimePoint = std::chrono::system_clock::time_point;

struct CertPair {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8 "PRIVATE KEY"
};

// The Secret keys (those of kubernetes.io/tls Secrets and cert-manager's).
inline constexpr char kCaKey[] = "ca.crt";
inline constexpr char kCertKey[] = "tls.crt";
inline constexpr char kPrivateKeyKey[] = "tls.key";

// "<svc>", "<svc>.<ns>", "<svc>.<ns>.svc", "<svc>.<ns>.svc.cluster.local".
std::vector<std::string> ServiceDnsNames(const std::string& service, const std::string& ns);

StatusOr<CertPair> CreateCa(const std::string& common_name, TimePoint now,
                            std::chrono::seconds lifetime);

struct ServingCertRequest {
  std::vector<std::string> dns_names;  // the first is also the subject CN
  std::vector<std::string> ips;        // "127.0.0.1", "::1"
  std::chrono::seconds lifetime{std::chrono::hours(24 * 90)};
};
StatusOr<CertPair> IssueServingCert(const CertPair& ca, const ServingCertRequest& request,
                                    TimePoint now);

// What a certificate says, as far as the decisions need.
struct CertInfo {
  TimePoint not_before;
  TimePoint not_after;
  std::vector<std::string> dns_names;  // subjectAltName DNS entries, in order
  std::vector<std::string> ips;        // subjectAltName IP entries, printed
  std::string serial_hex;              // lower case
  bool is_ca = false;                  // basicConstraints CA:TRUE
};
// The first certificate of a PEM text.
StatusOr<CertInfo> ParseCert(std::string_view pem);
// Each "-----BEGIN CERTIFICATE-----" block of a PEM text (a caBundle, a
// chain), in order, each ending in a newline; text between blocks and an
// unterminated block are dropped. Does not parse the blocks.
std::vector<std::string> SplitPemCerts(std::string_view pem);

// OK when `cert_pem` chains to a CA of `ca_pem` (one CA or a bundle of
// several) and is valid at `at`.
Status VerifyIssuedBy(std::string_view cert_pem, std::string_view ca_pem, TimePoint at);
// OK when `key_pem` is the private key of `cert_pem`.
Status CheckKeyMatches(std::string_view cert_pem, std::string_view key_pem);

// --- the decision ---

enum class CertAction {
  kKeep,          // everything valid, names right, far from expiry
  kRenewServing,  // new serving cert from the existing CA
  kRecreateAll,   // new CA and serving cert
};
const char* CertActionName(CertAction a);

// What the Secret holds, already inspected (InspectSecret builds it).
struct SecretState {
  std::optional<CertInfo> ca;       // absent: missing or unparsable
  std::optional<CertInfo> serving;  // absent: missing or unparsable
  bool key_matches = false;         // tls.key belongs to tls.crt
  bool serving_signed_by_ca = false;
};

struct CertWanted {
  std::vector<std::string> dns_names;
  std::vector<std::string> ips;
};

// Pure. RecreateAll: no usable CA (missing, not a CA, or less than a third of
// its lifetime left). RenewServing: the serving cert missing, not matching
// its key, not issued by the CA, names or IPs differ from `wanted` (as sets),
// not yet valid, or less than a third of its lifetime left. Keep otherwise.
CertAction Decide(TimePoint now, const SecretState& state, const CertWanted& wanted);

// Parses and cross-checks the Secret's decoded data (key -> PEM).
SecretState InspectSecret(const std::string& ca_pem, const std::string& cert_pem,
                          const std::string& key_pem, TimePoint now);

}  // namespace kc::webhook
