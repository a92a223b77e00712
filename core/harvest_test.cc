#include "core/harvest.h"

#include <gtest/gtest.h>

#include "core/api_types.h"
#include "core/spec_sections.h"

namespace kc::core {
namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');
const std::string kC(64, 'c');

InboxFile In(std::string uid, std::string path, std::string sum, std::uint64_t size = 10,
             std::string problem = "") {
  return {std::move(uid), {std::move(path), size, std::move(sum)}, std::move(problem)};
}

std::vector<std::string> Paths(const MergePlan& p) {
  std::vector<std::string> out;
  for (const auto& f : p.add) out.push_back(f.file.path);
  return out;
}

TEST(HarvestMode, NamesRoundTrip) {
  for (HarvestMode m : kHarvestModes) {
    auto parsed = ParseHarvestMode(HarvestModeName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  auto bad = ParseHarvestMode("merge");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Report or Merge"), std::string::npos);
}

TEST(HarvestPath, Rules) {
  struct Case {
    std::string path;
    bool ok;
    std::string says;
  };
  const Case cases[] = {
      {"triton/ab12/k.cubin", true, ""},
      {"inductor/fxgraph/xy/key", true, ""},
      {"vllm/torch_compile_cache/h/rank_0_0/x.py", true, ""},
      {"nv/ComputeCache/index", false, "ComputeCache"},
      {"manifest.json", false, "top of the cache"},
      {"READY", false, "top of the cache"},
      {"triton/../READY", false, ".."},
      {"/etc/passwd", false, ""},
      {"", false, ""},
  };
  for (const auto& c : cases) {
    Status s = CheckHarvestPath(c.path);
    EXPECT_EQ(s.ok(), c.ok) << c.path;
    if (!c.ok) {
      EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    }
  }
}

TEST(HarvestList, CanonicalSoItsDigestIsStable) {
  const std::vector<HarvestFile> files = {{"triton/b/k", 3, kA}, {"triton/a/k", 4, kB}};
  const std::vector<HarvestFile> reversed = {files[1], files[0]};
  EXPECT_EQ(HarvestListToJson(files), HarvestListToJson(reversed));
  const HarvestListRef ref = RefOf(files);
  EXPECT_EQ(ref.files, 2u);
  EXPECT_EQ(ref.bytes, 7u);
  EXPECT_EQ(ref.sha256, RefOf(reversed).sha256);
  auto back = ParseHarvestList(HarvestListToJson(files));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].path, "triton/a/k");
  struct Bad {
    std::string json;
    std::string says;
  };
  const Bad bad[] = {
      {"{}", "not a JSON array"},
      {R"([{"path":"../x","size":1,"sha256":")" + kA + R"("}])", "[0].path"},
      {R"([{"path":"nv/x/y","size":1,"sha256":")" + kA + R"("}])", "ComputeCache"},
      {R"([{"path":"t/x","size":-1,"sha256":")" + kA + R"("}])", "[0].size"},
      {R"([{"path":"t/x","size":1,"sha256":"AB"}])", "[0].sha256"},
      {R"([{"path":"t/x","size":1,"sha256":")" + kA + R"("},{"path":"t/x","size":1,"sha256":")" +
           kA + R"("}])",
       "listed twice"},
  };
  for (const auto& c : bad) {
    auto r = ParseHarvestList(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
}

TEST(HarvestAccept, RoundTripsAndRefusesHostileLists) {
  std::vector<HarvestPod> pods = {{"uid-1", {3, 30, kA}}, {"uid-2", {1, 4, kB}}};
  auto back = ParseHarvestAccept(HarvestAcceptToJson(pods));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, pods);
  struct Bad {
    std::string json;
    std::string says;
  };
  const Bad bad[] = {
      {"{}", "not a JSON array"},
      {"[1]", "[0] must be an object"},
      {R"([{"uid":"../x","files":1,"bytes":1,"sha256":")" + kA + R"("}])", "[0].uid"},
      {R"([{"uid":"u","files":-1,"bytes":1,"sha256":")" + kA + R"("}])", "[0].files"},
      {R"([{"uid":"u","files":1,"bytes":1,"sha256":"AB"}])", "[0].sha256"},
      {R"([{"uid":"u","files":1,"bytes":1,"sha256":")" + kA +
           R"("},{"uid":"u","files":1,"bytes":1,"sha256":")" + kA + R"("}])",
       "[1].uid is listed twice"},
  };
  for (const auto& b : bad) {
    auto r = ParseHarvestAccept(b.json);
    ASSERT_FALSE(r.ok()) << b.json;
    EXPECT_NE(r.status().message().find(b.says), std::string::npos) << r.status().message();
  }
  std::vector<HarvestPod> many;
  for (std::size_t i = 0; i <= kMaxHarvestPods; ++i)
    many.push_back({"u" + std::to_string(i), {1, 1, kA}});
  auto over = ParseHarvestAccept(HarvestAcceptToJson(many));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("more than 256 pods"), std::string::npos);
  // Whatever the pods compiled, the accept list of a full Job stays far
  // under the 128 KiB an environment variable may hold.
  EXPECT_LT(HarvestAcceptToJson(std::vector<HarvestPod>(kMaxHarvestPods, {std::string(36, 'u'),
                                                                          {99999, 1LL << 40, kA}}))
                .size(),
            64u * 1024);
}

TEST(PlanMerge, UnionDuplicatesAndConflicts) {
  const std::map<std::string, std::string> base = {{"triton/old/k.cubin", kA}};
  // A new entry from two pods with equal bytes: added once. A path already
  // in the base with its bytes: a duplicate. With other bytes: a conflict.
  MergePlan p = PlanMerge(base,
                          {In("p1", "triton/new/k.cubin", kB), In("p2", "triton/new/k.cubin", kB),
                           In("p1", "triton/new/k.json", kC), In("p2", "triton/old/k.cubin", kA),
                           In("p3", "inductor/e/f", kA), In("p3", "triton/old/k.cubin", kB)},
                          HarvestCaps{});
  EXPECT_EQ(Paths(p),
            (std::vector<std::string>{"inductor/e/f", "triton/new/k.cubin", "triton/new/k.json"}));
  EXPECT_EQ(p.add[1].pod_uid, "p1");
  EXPECT_EQ(p.duplicates, std::vector<std::string>{"triton/old/k.cubin"});
  EXPECT_EQ(p.conflicts, std::vector<std::string>{"triton/old/k.cubin"});
  EXPECT_TRUE(p.rejected.empty());
}

TEST(PlanMerge, TwoPodsWithOtherBytesKeepTheWholeEntryOut) {
  MergePlan p = PlanMerge({},
                          {In("p1", "triton/h/k.cubin", kA), In("p1", "triton/h/k.json", kC),
                           In("p2", "triton/h/k.cubin", kB), In("p2", "triton/other/k", kC)},
                          HarvestCaps{});
  EXPECT_EQ(Paths(p), std::vector<std::string>{"triton/other/k"});
  EXPECT_EQ(p.conflicts, std::vector<std::string>{"triton/h/k.cubin"});
}

TEST(PlanMerge, ARejectedFileKeepsItsPodsEntryOut) {
  MergePlan p = PlanMerge({},
                          {In("p1", "triton/h/k.cubin", kA, 10, "sha256 differs from the report"),
                           In("p1", "triton/h/k.json", kC), In("p2", "triton/h/k.json", kC),
                           In("p1", "nv/ComputeCache/x", kA), In("p1", "triton/ok/k", kB)},
                          HarvestCaps{});
  // p1's triton/h is out; p2 offers k.json alone (its own entry is whole).
  EXPECT_EQ(Paths(p), (std::vector<std::string>{"triton/h/k.json", "triton/ok/k"}));
  EXPECT_EQ(p.add[0].pod_uid, "p2");
  ASSERT_EQ(p.rejected.size(), 2u);
  EXPECT_NE(p.rejected[0].find("sha256 differs"), std::string::npos);
  EXPECT_NE(p.rejected[1].find("ComputeCache"), std::string::npos);
}

TEST(PlanMerge, FingerprintCapsTakeWholeEntriesInPathOrder) {
  HarvestCaps caps;
  caps.max_files_per_fingerprint = 3;
  MergePlan p =
      PlanMerge({},
                {In("p", "triton/a/1", kA), In("p", "triton/a/2", kA), In("p", "triton/b/1", kA),
                 In("p", "triton/b/2", kA), In("p", "triton/c/1", kA)},
                caps);
  EXPECT_EQ(Paths(p), (std::vector<std::string>{"triton/a/1", "triton/a/2", "triton/c/1"}));
  EXPECT_EQ(p.rejected.size(), 2u);
  caps = HarvestCaps{};
  caps.max_bytes_per_fingerprint = 15;
  p = PlanMerge({}, {In("p", "triton/a/1", kA, 10), In("p", "triton/b/1", kA, 10)}, caps);
  EXPECT_EQ(Paths(p), std::vector<std::string>{"triton/a/1"});
}

TEST(HarvestSpec, ValidationNamesTheField) {
  HarvestSpec ok;
  EXPECT_TRUE(CheckHarvest(ok).errors.empty());
  struct Case {
    HarvestSpec spec;
    std::string says;
  };
  std::vector<Case> cases;
  cases.push_back({HarvestSpec{.interval = std::chrono::seconds(5)},
                   "spec.harvest.interval: \"5s\" is shorter than 10s"});
  cases.push_back({HarvestSpec{.max_files_per_pod = 0}, "spec.harvest.maxFilesPerPod"});
  cases.push_back({HarvestSpec{.max_bytes_per_pod = "lots"}, "spec.harvest.maxBytesPerPod"});
  cases.push_back(
      {HarvestSpec{.max_files_per_fingerprint = 70000}, "spec.harvest.maxFilesPerFingerprint"});
  cases.push_back({HarvestSpec{.max_bytes_per_fingerprint = "0"},
                   "spec.harvest.maxBytesPerFingerprint: must be at least 1 byte"});
  for (const auto& c : cases) {
    auto errors = CheckHarvest(c.spec).errors;
    ASSERT_EQ(errors.size(), 1u) << c.says;
    EXPECT_NE(errors[0].find(c.says), std::string::npos) << errors[0];
  }
  HarvestCaps caps = HarvestCapsOf(HarvestSpec{.max_bytes_per_pod = "1Mi"});
  EXPECT_EQ(caps.max_bytes_per_pod, 1 << 20);
  EXPECT_EQ(caps.max_files_per_pod, kDefaultHarvestMaxFilesPerPod);
}

// The mode and the interval are decoded where the JSON is read: a value
// that does not decode is one error naming the field, and the default
// stands.
TEST(HarvestSpec, DecodedFromJson) {
  struct Case {
    std::string name;
    Json harvest;
    HarvestMode mode;
    std::chrono::seconds interval;
    std::string says;  // "" = no error
  };
  const std::vector<Case> cases = {
      {"absent", Json::object(), HarvestMode::kReport, kDefaultHarvestInterval, ""},
      {"nulls",
       {{"mode", nullptr}, {"interval", nullptr}},
       HarvestMode::kReport,
       kDefaultHarvestInterval,
       ""},
      {"merge every 90m",
       {{"mode", "Merge"}, {"interval", "90m"}},
       HarvestMode::kMerge,
       std::chrono::minutes(90),
       ""},
      {"bad mode",
       {{"mode", "Always"}},
       HarvestMode::kReport,
       kDefaultHarvestInterval,
       "spec.harvest.mode: \"Always\" is not a harvest mode (Report or Merge)"},
      {"mode in lower case",
       {{"mode", "merge"}},
       HarvestMode::kReport,
       kDefaultHarvestInterval,
       "spec.harvest.mode: \"merge\" is not a harvest mode"},
      {"mode not a string",
       {{"mode", 1}},
       HarvestMode::kReport,
       kDefaultHarvestInterval,
       "spec.harvest.mode: expected a string"},
      {"bad interval",
       {{"mode", "Merge"}, {"interval", "soon"}},
       HarvestMode::kMerge,
       kDefaultHarvestInterval,
       "spec.harvest.interval: malformed duration \"soon\""},
      {"interval in days",
       {{"interval", "1d"}},
       HarvestMode::kReport,
       kDefaultHarvestInterval,
       "spec.harvest.interval: malformed duration \"1d\""},
  };
  for (const auto& c : cases) {
    Json j = SpecToJson(KernelCacheSpec{});
    j["harvest"] = c.harvest;
    std::vector<std::string> errors;
    const HarvestSpec h = SpecFromJson(j, &errors).harvest;
    EXPECT_EQ(h.mode, c.mode) << c.name;
    EXPECT_EQ(h.interval, c.interval) << c.name;
    if (c.says.empty()) {
      EXPECT_TRUE(errors.empty()) << c.name << ": " << errors.front();
    } else {
      ASSERT_EQ(errors.size(), 1u) << c.name;
      EXPECT_EQ(errors[0].find(c.says), 0u) << c.name << ": " << errors[0];
    }
  }
}

TEST(HarvestSpec, JsonRoundTripAndDefaults) {
  KernelCacheSpec spec;
  spec.harvest.mode = HarvestMode::kMerge;
  spec.harvest.interval = std::chrono::seconds(30);
  std::vector<std::string> errors;
  const Json j = SpecToJson(spec);
  EXPECT_EQ(j["harvest"]["mode"], "Merge");
  EXPECT_EQ(j["harvest"]["interval"], "30s");
  KernelCacheSpec back = SpecFromJson(j, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(back.harvest, spec.harvest);
  // The defaults are written as the CRD states them.
  const Json d = SpecToJson(KernelCacheSpec{});
  EXPECT_EQ(d["harvest"]["mode"], "Report");
  EXPECT_EQ(d["harvest"]["interval"], "1h");
}

}  // namespace
}  // namespace kc::core
