#include "operator/webhook/certs.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>
#include <set>

namespace kc::webhook {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Pkey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Store = std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using StoreCtx = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
using Ext = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using Names = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, GENERAL_NAMES_free>>;
using BasicConstraints =
    std::unique_ptr<BASIC_CONSTRAINTS, Deleter<BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free>>;

// The OpenSSL error queue as text (and emptied).
std::string SslError(const std::string& what) {
  std::string out = what;
  unsigned long e = 0;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    out += ": ";
    out += buf;
  }
  return out;
}

Status Fail(const std::string& what) { return InternalError(SslError(what)); }

std::string ToPem(const X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), const_cast<X509*>(cert)) != 1) return "";
  BUF_MEM* mem = nullptr;
  BIO_get_mem_ptr(bio.get(), &mem);
  return std::string(mem->data, mem->length);
}

std::string KeyToPem(const EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return "";
  BUF_MEM* mem = nullptr;
  BIO_get_mem_ptr(bio.get(), &mem);
  return std::string(mem->data, mem->length);
}

X509Ptr CertFromPem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

Pkey KeyFromPem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return Pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

Pkey NewKey() { return Pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")); }

Status SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return Fail("RAND_bytes");
  bytes[0] &= 0x7f;  // positive
  bytes[0] |= 0x01;  // and 16 bytes long
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> bn(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return Fail("serial");
  }
  return OkStatus();
}

Status AddExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ext ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return Fail(std::string("extension ") + OBJ_nid2sn(nid) + "=" + value);
  }
  return OkStatus();
}

std::chrono::seconds Backdate(std::chrono::seconds lifetime) {
  return std::min<std::chrono::seconds>(std::chrono::minutes(5), lifetime / 10);
}

// A certificate skeleton: version 3, serial, validity, subject CN, key.
StatusOr<X509Ptr> NewCert(const std::string& cn, EVP_PKEY* key, TimePoint now,
                          std::chrono::seconds lifetime) {
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1) return Fail("X509_new");
  KC_RETURN_IF_ERROR(SetRandomSerial(cert.get()));
  const time_t nb = std::chrono::system_clock::to_time_t(now - Backdate(lifetime));
  const time_t na = std::chrono::system_clock::to_time_t(now + lifetime);
  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()), nb) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), na) == nullptr) {
    return Fail("validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return Fail("subject");
  }
  return cert;
}

TimePoint FromAsn1(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return TimePoint{};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<std::string> ServiceDnsNames(const std::string& service, const std::string& ns) {
  return {service, service + "." + ns, service + "." + ns + ".svc",
          service + "." + ns + ".svc.cluster.local"};
}

StatusOr<CertPair> CreateCa(const std::string& common_name, TimePoint now,
                            std::chrono::seconds lifetime) {
  if (lifetime.count() <= 0) return InvalidArgumentError("CA lifetime must be positive");
  Pkey key = NewKey();
  if (!key) return Fail("CA key");
  KC_ASSIGN_OR_RETURN(X509Ptr cert, NewCert(common_name, key.get(), now, lifetime));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1) {
    return Fail("issuer");
  }
  KC_RETURN_IF_ERROR(AddExt(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE"));
  KC_RETURN_IF_ERROR(AddExt(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  KC_RETURN_IF_ERROR(AddExt(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return Fail("CA signature");
  return CertPair{ToPem(cert.get()), KeyToPem(key.get())};
}

StatusOr<CertPair> IssueServingCert(const CertPair& ca, const ServingCertRequest& request,
                                    TimePoint now) {
  if (request.dns_names.empty() && request.ips.empty()) {
    return InvalidArgumentError("serving certificate: no DNS names and no IPs");
  }
  if (request.lifetime.count() <= 0) return InvalidArgumentError("lifetime must be positive");
  X509Ptr ca_cert = CertFromPem(ca.cert_pem);
  Pkey ca_key = KeyFromPem(ca.key_pem);
  if (!ca_cert || !ca_key) return InvalidArgumentError(SslError("CA certificate or key"));
  Pkey key = NewKey();
  if (!key) return Fail("serving key");
  const std::string cn = request.dns_names.empty() ? request.ips[0] : request.dns_names[0];
  KC_ASSIGN_OR_RETURN(X509Ptr cert, NewCert(cn, key.get(), now, request.lifetime));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get())) != 1) {
    return Fail("issuer");
  }
  std::string san;
  for (const std::string& d : request.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const std::string& ip : request.ips) san += (san.empty() ? "IP:" : ",IP:") + ip;
  KC_RETURN_IF_ERROR(AddExt(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE"));
  KC_RETURN_IF_ERROR(AddExt(cert.get(), ca_cert.get(), NID_key_usage,
                            "critical,digitalSignature,keyEncipherment"));
  KC_RETURN_IF_ERROR(AddExt(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth"));
  KC_RETURN_IF_ERROR(AddExt(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid"));
  KC_RETURN_IF_ERROR(AddExt(cert.get(), ca_cert.get(), NID_subject_alt_name, san));
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) return Fail("signature");
  return CertPair{ToPem(cert.get()), KeyToPem(key.get())};
}

StatusOr<CertInfo> ParseCert(std::string_view pem) {
  X509Ptr cert = CertFromPem(pem);
  if (!cert) return InvalidArgumentError(SslError("not a PEM certificate"));
  CertInfo info;
  info.not_before = FromAsn1(X509_get0_notBefore(cert.get()));
  info.not_after = FromAsn1(X509_get0_notAfter(cert.get()));
  if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr)) {
    if (char* hex = BN_bn2hex(bn)) {
      info.serial_hex = Lower(hex);
      OPENSSL_free(hex);
    }
    BN_free(bn);
  }
  BasicConstraints bc(static_cast<BASIC_CONSTRAINTS*>(
      X509_get_ext_d2i(cert.get(), NID_basic_constraints, nullptr, nullptr)));
  info.is_ca = bc && bc->ca != 0;
  Names names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type == GEN_DNS) {
      const ASN1_STRING* s = n->d.dNSName;
      info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                  ASN1_STRING_length(s));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = n->d.iPAddress;
      char buf[INET6_ADDRSTRLEN] = {0};
      const int len = ASN1_STRING_length(s);
      const int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : 0;
      if (family != 0 && inet_ntop(family, ASN1_STRING_get0_data(s), buf, sizeof(buf))) {
        info.ips.emplace_back(buf);
      }
    }
  }
  return info;
}

std::vector<std::string> SplitPemCerts(std::string_view pem) {
  static constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  static constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = pem.find(kBegin, pos)) != std::string_view::npos) {
    const size_t end = pem.find(kEnd, pos + kBegin.size());
    if (end == std::string_view::npos) break;
    out.emplace_back(pem.substr(pos, end + kEnd.size() - pos));
    out.back() += '\n';
    pos = end + kEnd.size();
  }
  return out;
}

Status VerifyIssuedBy(std::string_view cert_pem, std::string_view ca_pem, TimePoint at) {
  X509Ptr cert = CertFromPem(cert_pem);
  Store store(X509_STORE_new());
  StoreCtx ctx(X509_STORE_CTX_new());
  if (!store || !ctx) return Fail("verify setup");
  size_t cas = 0;
  for (const std::string& block : SplitPemCerts(ca_pem)) {
    X509Ptr ca = CertFromPem(block);
    if (ca && X509_STORE_add_cert(store.get(), ca.get()) == 1) ++cas;
  }
  if (!cert || cas == 0) return InvalidArgumentError(SslError("certificate or CA is not PEM"));
  if (X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return Fail("verify setup");
  }
  X509_STORE_CTX_set_time(ctx.get(), 0, std::chrono::system_clock::to_time_t(at));
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return FailedPreconditionError(std::string("certificate does not verify against the CA: ") +
                                   X509_verify_cert_error_string(err));
  }
  return OkStatus();
}

Status CheckKeyMatches(std::string_view cert_pem, std::string_view key_pem) {
  X509Ptr cert = CertFromPem(cert_pem);
  Pkey key = KeyFromPem(key_pem);
  if (!cert || !key) return InvalidArgumentError(SslError("certificate or key is not PEM"));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return FailedPreconditionError("the private key does not belong to the certificate");
  }
  return OkStatus();
}

const char* CertActionName(CertAction a) {
  switch (a) {
    case CertAction::kKeep:
      return "Keep";
    case CertAction::kRenewServing:
      return "RenewServing";
    case CertAction::kRecreateAll:
      return "RecreateAll";
  }
  return "?";
}

namespace {
// Less than a third of [not_before, not_after] left at `now` (or past it).
bool NearExpiry(const CertInfo& c, TimePoint now) {
  const auto lifetime = c.not_after - c.not_before;
  return c.not_after - now < lifetime / 3;
}
std::set<std::string> LowerSet(const std::vector<std::string>& v) {
  std::set<std::string> out;
  for (const std::string& s : v) out.insert(Lower(s));
  return out;
}
}  // namespace

CertAction Decide(TimePoint now, const SecretState& state, const CertWanted& wanted) {
  if (!state.ca || !state.ca->is_ca || NearExpiry(*state.ca, now) || now < state.ca->not_before) {
    return CertAction::kRecreateAll;
  }
  const auto& s = state.serving;
  if (!s || !state.key_matches || !state.serving_signed_by_ca || now < s->not_before ||
      NearExpiry(*s, now) || LowerSet(s->dns_names) != LowerSet(wanted.dns_names) ||
      LowerSet(s->ips) != LowerSet(wanted.ips)) {
    return CertAction::kRenewServing;
  }
  return CertAction::kKeep;
}

SecretState InspectSecret(const std::string& ca_pem, const std::string& cert_pem,
                          const std::string& key_pem, TimePoint now) {
  SecretState st;
  if (auto ca = ParseCert(ca_pem); ca.ok()) st.ca = *ca;
  if (auto s = ParseCert(cert_pem); s.ok()) st.serving = *s;
  st.key_matches = st.serving && CheckKeyMatches(cert_pem, key_pem).ok();
  st.serving_signed_by_ca = st.ca && st.serving && VerifyIssuedBy(cert_pem, ca_pem, now).ok();
  ERR_clear_error();
  return st;
}

}  // namespace kc::webhook
