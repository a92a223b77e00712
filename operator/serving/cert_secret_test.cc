#include "operator/serving/cert_secret.h"

#include <gtest/gtest.h>

#include "api/time.h"
#include "base/base64.h"
#include "operator/serving/cert_controller.h"

namespace kc::webhook {
namespace {

using Json = kube::Json;

std::string B64(const std::string& s) { return kc::EncodeBase64(s); }

const TimePoint kNow = api::ParseTime("2026-12-02T10:00:00Z").value();

TEST(CertSecretTest, ReadsEveryField) {
  const Json secret = {{"metadata",
                        {{"resourceVersion", "42"},
                         {"annotations", {{kNextCaAnnouncedAnnotation, "2026-12-02T10:00:00Z"}}}}},
                       {"data",
                        {{kCaKey, B64("CA")},
                         {kCaPrivateKeyKey, B64("CAKEY")},
                         {kCertKey, B64("CERT")},
                         {kPrivateKeyKey, B64("KEY")},
                         {kPreviousCaKey, B64("OLD")},
                         {kNextCaKey, B64("NEXT")},
                         {kNextCaPrivateKeyKey, B64("NEXTKEY")}}}};
  const SecretFields f = ReadSecretFields(secret);
  EXPECT_EQ(f.ca_pem, "CA");
  EXPECT_EQ(f.ca_key_pem, "CAKEY");
  EXPECT_EQ(f.cert_pem, "CERT");
  EXPECT_EQ(f.key_pem, "KEY");
  EXPECT_EQ(f.previous_cas_pem, "OLD");
  EXPECT_EQ(f.next_ca_pem, "NEXT");
  EXPECT_EQ(f.next_ca_key_pem, "NEXTKEY");
  EXPECT_EQ(f.next_ca_announced, kNow);
  EXPECT_EQ(f.resource_version, "42");
}

TEST(CertSecretTest, MissingOrBadFieldsReadAsEmpty) {
  for (const Json& secret :
       {Json::object(), Json("not an object"), Json{{"data", "x"}},
        Json{{"data", {{kCaKey, "%%% not base64"}, {kCertKey, 7}}},
             {"metadata", {{"annotations", {{kNextCaAnnouncedAnnotation, "yesterday"}}}}}}}) {
    const SecretFields f = ReadSecretFields(secret);
    EXPECT_EQ(f.ca_pem, "") << secret;
    EXPECT_EQ(f.cert_pem, "") << secret;
    EXPECT_FALSE(f.next_ca_announced) << secret;
    EXPECT_EQ(f.resource_version, "") << secret;
  }
}

TEST(CertSecretTest, IssuedWriteOfANewSecret) {
  const SecretWrite none = IssuedSecretWrite({"CA", "CAKEY"}, {"CERT", "KEY"}, {}, false);
  EXPECT_EQ(none.data, (Json{{kCaKey, B64("CA")},
                             {kCaPrivateKeyKey, B64("CAKEY")},
                             {kCertKey, B64("CERT")},
                             {kPrivateKeyKey, B64("KEY")}}));
  EXPECT_TRUE(none.annotations.empty());
  const SecretWrite kept = IssuedSecretWrite({"CA", "CAKEY"}, {"CERT", "KEY"}, {"A", "B"}, false);
  EXPECT_EQ(kept.data[kPreviousCaKey], B64("AB"));
}

TEST(CertSecretTest, IssuedWriteOfAnExistingSecretClearsTheRotation) {
  const SecretWrite w = IssuedSecretWrite({"CA", "CAKEY"}, {"CERT", "KEY"}, {}, true);
  EXPECT_TRUE(w.data[kPreviousCaKey].is_null());
  EXPECT_TRUE(w.data[kNextCaKey].is_null());
  EXPECT_TRUE(w.data[kNextCaPrivateKeyKey].is_null());
  EXPECT_TRUE(w.annotations[kNextCaAnnouncedAnnotation].is_null());
  EXPECT_EQ(IssuedSecretWrite({"CA", "K"}, {"C", "K"}, {"OLD"}, true).data[kPreviousCaKey],
            B64("OLD"));
}

TEST(CertSecretTest, NextCaWriteAndThePatch) {
  const SecretWrite w = NextCaWrite({"NEXT", "NEXTKEY"}, kNow);
  EXPECT_EQ(w.data, (Json{{kNextCaKey, B64("NEXT")}, {kNextCaPrivateKeyKey, B64("NEXTKEY")}}));
  EXPECT_EQ(w.annotations[kNextCaAnnouncedAnnotation], "2026-12-02T10:00:00Z");
  const Json patch = SecretPatch("7", w);
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(patch["metadata"]["annotations"], w.annotations);
  EXPECT_EQ(patch["data"], w.data);
  EXPECT_FALSE(SecretPatch("7", SecretWrite{}).at("metadata").contains("annotations"));
}

TEST(CertSecretTest, NewSecret) {
  const Json s = NewSecret("kc-system", "tls", {{kCaKey, B64("CA")}});
  EXPECT_EQ(s["kind"], "Secret");
  EXPECT_EQ(s["type"], "kubernetes.io/tls");
  EXPECT_EQ(s["metadata"]["namespace"], "kc-system");
  EXPECT_EQ(s["metadata"]["name"], "tls");
  EXPECT_EQ(s["metadata"]["labels"]["app.kubernetes.io/managed-by"], "kernelcache-operator");
  EXPECT_EQ(s["data"][kCaKey], B64("CA"));
}

TEST(CertSecretTest, IssuedEvent) {
  const CertEvent created = IssuedEvent(CertAction::kRecreateAll, "0a", "2027-01-01T00:00:00Z");
  EXPECT_EQ(created.reason, "WebhookCertificatesCreated");
  EXPECT_EQ(created.message,
            "created a new CA and serving certificate (serial 0a, valid until "
            "2027-01-01T00:00:00Z)");
  const CertEvent renewed = IssuedEvent(CertAction::kRenewServing, "0b", "t");
  EXPECT_EQ(renewed.reason, "WebhookCertificateRenewed");
  EXPECT_EQ(renewed.message, "renewed the serving certificate (serial 0b, valid until t)");
}

}  // namespace
}  // namespace kc::webhook
