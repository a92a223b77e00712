#include "operator/serving/cert_secret.h"

#include "api/time.h"
#include "base/base64.h"
#include "operator/serving/cert_controller.h"

namespace kc::webhook {
namespace {

using Json = kube::Json;

// The decoded value of data[key], or "" when absent or not base64.
std::string DataValue(const Json& secret, const char* key) {
  if (!secret.is_object() || !secret.contains("data") || !secret["data"].is_object()) return "";
  const Json& data = secret["data"];
  auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return "";
  auto decoded = kc::DecodeBase64(it->get<std::string>());
  return decoded.ok() ? *decoded : "";
}

const Json& Metadata(const Json& secret) {
  static const Json kEmpty = Json::object();
  if (!secret.is_object()) return kEmpty;
  auto it = secret.find("metadata");
  return it != secret.end() && it->is_object() ? *it : kEmpty;
}

std::optional<TimePoint> Annotation(const Json& secret, const char* key) {
  const Json& ann = Metadata(secret).value("annotations", Json::object());
  if (!ann.is_object() || !ann.contains(key) || !ann[key].is_string()) return std::nullopt;
  auto t = api::ParseTime(ann[key].get<std::string>());
  return t.ok() ? std::optional<TimePoint>(*t) : std::nullopt;
}

std::string Concat(const std::vector<std::string>& pems) {
  std::string out;
  for (const std::string& p : pems) out += p;
  return out;
}

}  // namespace

SecretFields ReadSecretFields(const Json& secret) {
  SecretFields f;
  f.ca_pem = DataValue(secret, kCaKey);
  f.ca_key_pem = DataValue(secret, kCaPrivateKeyKey);
  f.cert_pem = DataValue(secret, kCertKey);
  f.key_pem = DataValue(secret, kPrivateKeyKey);
  f.previous_cas_pem = DataValue(secret, kPreviousCaKey);
  f.next_ca_pem = DataValue(secret, kNextCaKey);
  f.next_ca_key_pem = DataValue(secret, kNextCaPrivateKeyKey);
  f.next_ca_announced = Annotation(secret, kNextCaAnnouncedAnnotation);
  const Json& rv = Metadata(secret).value("resourceVersion", Json());
  if (rv.is_string()) f.resource_version = rv.get<std::string>();
  return f;
}

SecretWrite IssuedSecretWrite(const CertPair& ca, const CertPair& serving,
                              const std::vector<std::string>& retained, bool exists) {
  const std::string retained_pem = Concat(retained);
  SecretWrite w;
  w.data = {{kCaKey, kc::EncodeBase64(ca.cert_pem)},
            {kCaPrivateKeyKey, kc::EncodeBase64(ca.key_pem)},
            {kCertKey, kc::EncodeBase64(serving.cert_pem)},
            {kPrivateKeyKey, kc::EncodeBase64(serving.key_pem)}};
  if (exists) {
    // null removes what no longer applies (a merge patch).
    w.data[kPreviousCaKey] =
        retained_pem.empty() ? Json(nullptr) : Json(kc::EncodeBase64(retained_pem));
    w.data[kNextCaKey] = nullptr;
    w.data[kNextCaPrivateKeyKey] = nullptr;
    w.annotations[kNextCaAnnouncedAnnotation] = nullptr;
  } else if (!retained_pem.empty()) {
    w.data[kPreviousCaKey] = kc::EncodeBase64(retained_pem);
  }
  return w;
}

SecretWrite NextCaWrite(const CertPair& next, TimePoint now) {
  SecretWrite w;
  w.data = {{kNextCaKey, kc::EncodeBase64(next.cert_pem)},
            {kNextCaPrivateKeyKey, kc::EncodeBase64(next.key_pem)}};
  w.annotations = {{kNextCaAnnouncedAnnotation, api::FormatTime(now)}};
  return w;
}

Json NewSecret(const std::string& ns, const std::string& name, const Json& data) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{"app.kubernetes.io/managed-by", "kernelcache-operator"}}}}},
          {"type", "kubernetes.io/tls"},
          {"data", data}};
}

Json SecretPatch(const std::string& resource_version, const SecretWrite& write) {
  Json meta = {{"resourceVersion", resource_version}};
  if (!write.annotations.empty()) meta["annotations"] = write.annotations;
  return {{"metadata", meta}, {"data", write.data}};
}

CertEvent IssuedEvent(CertAction action, const std::string& serial, const std::string& not_after) {
  const bool all = action == CertAction::kRecreateAll;
  const std::string what =
      all ? "created a new CA and serving certificate" : "renewed the serving certificate";
  return {all ? "WebhookCertificatesCreated" : "WebhookCertificateRenewed",
          what + " (serial " + serial + ", valid until " + not_after + ")"};
}

}  // namespace kc::webhook
