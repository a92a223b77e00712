#include "core/manifest.h"

#include <gtest/gtest.h>

#include "testing/objects.h"

namespace kc::core {
namespace {

NodeFacts H200() { return testutil::H200Facts(); }
RuntimeFacts Runtime() {
  RuntimeFacts r;
  r.image = "registry.example/llama@sha256:abc";
  r.runtime = {{"pytorch", "2.11.0"}, {"triton", "3.6.0"}};
  return r;
}

Manifest Sample() {
  Manifest m;
  Fingerprint fp = ComputeFingerprint(H200(), Runtime());
  m.fingerprint_id = fp.id;
  m.fingerprint_sha256 = fp.sha256;
  m.node = H200();
  m.runtime = Runtime();
  m.frameworks = {{"triton", "3.6.0"}};
  m.files = {{"triton/b/k.json", 10, std::string(64, 'b')},
             {"triton/a/k.cubin", 20, std::string(64, 'a')}};
  m.links = {{"nv/link", "../triton/a/k.cubin"}};
  m.created_at = "2026-12-02T09:40:00Z";
  m.producer_owner = "job-1";
  m.producer_host = "warm-abc";
  FinalizeManifest(&m);
  return m;
}

TEST(Manifest, RoundTrip) {
  Manifest m = Sample();
  EXPECT_EQ(m.files[0].path, "triton/a/k.cubin");
  EXPECT_EQ(m.total_bytes, 30u);
  EXPECT_EQ(m.total_files, 2u);
  std::string text = ManifestToJson(m);
  auto back = ParseManifest(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, m);
  EXPECT_EQ(ManifestToJson(*back), text);  // deterministic
}

// A manifest's size is bounded where it is written and where it is read: a
// cache of kMaxManifestEntries files round-trips; one more is refused by
// CheckManifest (so seal never writes it) and by ParseManifest before it
// builds a tree.
TEST(Manifest, EntriesAreBoundedOnBothSides) {
  Manifest m = Sample();
  m.links.clear();
  m.files.clear();
  for (std::size_t i = 0; i < kMaxManifestEntries; ++i) {
    m.files.push_back({"t/" + std::to_string(i), 1, std::string(64, 'c')});
  }
  FinalizeManifest(&m);
  EXPECT_TRUE(CheckManifest(m).ok());
  const std::string at_bound = ManifestToJson(m);
  ASSERT_LT(at_bound.size(), kMaxManifestBytes);
  EXPECT_TRUE(ParseManifest(at_bound).ok());

  m.files.push_back({"t/over", 1, std::string(64, 'c')});
  FinalizeManifest(&m);
  Status refused = CheckManifest(m);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("more than the 200000 a cache may hold"), std::string::npos)
      << refused.message();
  EXPECT_FALSE(ParseManifest(ManifestToJson(m)).ok());

  // Far more entries than a manifest may hold, refused by the scan.
  std::string flood = R"({"schema":1,"files":[)";
  for (int i = 0; i < 2'000'000; ++i) flood += "0,";
  flood += "0]}";
  auto scanned = ParseManifest(flood);
  EXPECT_NE(scanned.status().message().find("holds more than"), std::string::npos)
      << scanned.status().message();
  auto deep = ParseManifest(std::string(100, '[') + std::string(100, ']'));
  EXPECT_NE(deep.status().message().find("nests deeper than 8 levels"), std::string::npos)
      << deep.status().message();
}

TEST(Manifest, WithoutInputs) {
  Manifest m = Sample();
  m.node.reset();
  m.runtime.reset();
  m.fingerprint_sha256.clear();
  m.fingerprint_id = "0123456789abcdef";
  auto back = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, m);
}

struct BadCase {
  std::string name;
  std::string from;  // substring of the good JSON to replace
  std::string to;
  std::string want;  // substring of the error
};

TEST(Manifest, StrictParseNamesTheField) {
  const std::string good = ManifestToJson(Sample());
  const BadCase cases[] = {
      {"schema", "\"schema\": 1,\n  \"totals\"", "\"schema\": 2,\n  \"totals\"", "schema"},
      {"unknown top", "\"createdAt\"", "\"extra\": 1, \"createdAt\"", "extra"},
      {"traversal", "\"triton/a/k.cubin\"", "\"../../etc/passwd\"", "files[0].path"},
      {"absolute", "\"triton/a/k.cubin\"", "\"/etc/passwd\"", "files[0].path"},
      {"bad sha", std::string(64, 'a'), "xyz", "files[0].sha256"},
      {"size type", "\"size\": 20", "\"size\": \"20\"", "files[0].size"},
      {"negative size", "\"size\": 20", "\"size\": -1", "files[0].size"},
      {"totals", "\"bytes\": 30", "\"bytes\": 31", "totals.bytes"},
      {"order", "\"triton/a/k.cubin\"", "\"zzz\"", "files[1].path"},
      {"fingerprint id", "\"id\": \"", "\"id\": \"0", "fingerprint.id"},
      {"node field", "\"gpuProduct\": \"NVIDIA-H200\"", "\"gpuProduct\": 5",
       "fingerprint.node.gpuProduct"},
      {"inputs disagree", "\"NVIDIA-H200\"", "\"NVIDIA-A100\"", "does not match its own inputs"},
      {"link escapes", "\"../triton/a/k.cubin\"", "\"../../../etc\"", "links[0]"},
      {"createdAt", "2026-12-02T09:40:00Z", "yesterday", "createdAt"},
      {"not json", "{", "", "not valid JSON"},
  };
  for (const auto& c : cases) {
    std::string text = good;
    auto pos = text.find(c.from);
    ASSERT_NE(pos, std::string::npos) << c.name;
    text.replace(pos, c.from.size(), c.to);
    auto m = ParseManifest(text);
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_NE(m.status().message().find(c.want), std::string::npos) << c.name << ": " << m.status();
  }
}

TEST(Manifest, ReservedNames) {
  Manifest m = Sample();
  m.files.push_back({"READY", 1, std::string(64, 'c')});
  FinalizeManifest(&m);
  EXPECT_FALSE(CheckManifest(m).ok());
}

TEST(Manifest, FactsJson) {
  auto n = ParseNodeFacts(NodeFactsToJson(H200()));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, H200());
  auto r = ParseRuntimeFacts(RuntimeFactsToJson(Runtime()));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, Runtime());
  auto r2 = ParseRuntimeFacts(R"({"image":"x"})");
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->schema_version, kLayoutSchemaVersion);
  EXPECT_FALSE(ParseNodeFacts(R"({"gpuProduct":"x"})").ok());
}

TEST(Manifest, Rfc3339) {
  EXPECT_EQ(Rfc3339(1796204136), "2026-12-02T09:35:36Z");
  auto t = ParseRfc3339("2026-12-02T09:35:36Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 1796204136);
  EXPECT_FALSE(ParseRfc3339("2026-12-02 09:35:36").ok());
}

}  // namespace
}  // namespace kc::core
