#include "core/convergence.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kc::core {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(KC_MISS_FIXTURES) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunRecord RunOf(std::int32_t index, std::uint64_t entries, int exit_code = 0,
                std::uint64_t autotune = 0) {
  RunRecord r;
  r.index = index;
  r.entries_added = entries;
  r.autotune_entries = autotune;
  r.exit_code = exit_code;
  return r;
}

TEST(NextPassStepTest, Table) {
  struct Case {
    const char* name;
    std::vector<RunRecord> runs;
    std::int32_t max_passes;
    PassStep want;
  };
  const std::vector<Case> cases = {
      {"nothing ran: run the warmup", {}, 3, PassStep::kRunPass},
      {"the warmup added entries: a pass", {RunOf(0, 9)}, 3, PassStep::kRunPass},
      {"the warmup added nothing: still one pass to prove it",
       {RunOf(0, 0)},
       3,
       PassStep::kRunPass},
      {"the warmup failed", {RunOf(0, 9, 1)}, 3, PassStep::kFailed},
      {"pass 1 added nothing", {RunOf(0, 9), RunOf(1, 0)}, 3, PassStep::kConverged},
      {"pass 1 added: pass 2", {RunOf(0, 9), RunOf(1, 2)}, 3, PassStep::kRunPass},
      {"pass 2 added nothing", {RunOf(0, 9), RunOf(1, 2), RunOf(2, 0)}, 3, PassStep::kConverged},
      {"the bound reached with additions",
       {RunOf(0, 9), RunOf(1, 2), RunOf(2, 1)},
       2,
       PassStep::kNotConverged},
      {"a bound of 1", {RunOf(0, 9), RunOf(1, 1)}, 1, PassStep::kNotConverged},
      {"a bound of 1, converged", {RunOf(0, 9), RunOf(1, 0)}, 1, PassStep::kConverged},
      {"a pass failed", {RunOf(0, 9), RunOf(1, 0, 137)}, 3, PassStep::kFailed},
  };
  for (const Case& c : cases) EXPECT_EQ(NextPassStep(c.runs, c.max_passes), c.want) << c.name;
}

// Two entries of one real Triton kernel (the metadata Triton 3.6 wrote for
// sm_90, core/testdata/runtime_miss/), the second compiled with other
// num_warps under another hash: the classifier names one kernel, the
// novelty rule calls the second an autotune variant; a kernel of another
// name is new.
TEST(NoveltyTest, SameKernelOtherConfigIsAutotuneWithRealTritonMetadata) {
  const std::string meta = Fixture("triton_metadata.json");
  const std::string source = Fixture("triton_source.mlir");
  ASSERT_FALSE(meta.empty()) << "fixture missing";
  nlohmann::json other = nlohmann::json::parse(meta);
  ASSERT_EQ(other["num_warps"], 4);
  other["num_warps"] = 8;
  nlohmann::json renamed = nlohmann::json::parse(meta);
  renamed["name"] = "late_kernel";

  auto entry = [&](const std::string& hash, const std::string& json) {
    return std::vector<WrittenFile>{
        {"triton/" + hash + "/add_kernel.json", json.size(), json},
        {"triton/" + hash + "/add_kernel.source", source.size(), source},
        {"triton/" + hash + "/add_kernel.cubin", 5000, ""}};
  };
  const auto known = ClassifyMisses(entry("HASHA", meta));
  ASSERT_EQ(known.size(), 1U);
  EXPECT_EQ(known[0].kernel, "add_kernel(x: *f32, y: *f32, out: *f32, n: i32)");
  const std::set<std::string> kernels = {known[0].kernel};

  const auto variant = ClassifyMisses(entry("HASHB", other.dump()));
  ASSERT_EQ(variant.size(), 1U);
  EXPECT_EQ(variant[0].kernel, known[0].kernel);
  EXPECT_NE(variant[0].detail.find("num_warps=8"), std::string::npos) << variant[0].detail;
  EXPECT_EQ(NoveltyOf(variant[0], kernels), Novelty::kAutotune);
  EXPECT_EQ(NoveltyOf(variant[0], {}), Novelty::kNew);  // nothing known: a new kernel

  const auto fresh = ClassifyMisses(entry("HASHC", renamed.dump()));
  ASSERT_EQ(fresh.size(), 1U);
  EXPECT_EQ(NoveltyOf(fresh[0], kernels), Novelty::kNew);
}

TEST(NoveltyTest, AutotuneResultsAndInductorBestConfigs) {
  struct Case {
    RuntimeMiss m;
    Novelty want;
  };
  const std::vector<Case> cases = {
      {{MissFramework::kTriton, "H", "autotune _attn_fwd key=[128]", 1, 10, ""},
       Novelty::kAutotune},
      {{MissFramework::kInductor, "ab/cabc123.best_config", "generated module cabc123.best_config",
        1, 10, ""},
       Novelty::kAutotune},
      {{MissFramework::kInductor, "ab/cabc123.py", "generated module cabc123.py", 1, 10, ""},
       Novelty::kNew},
      {{MissFramework::kInductor, "fxgraph/fxyz", "fxgraph entry fxyz", 1, 10, ""}, Novelty::kNew},
      {{MissFramework::kComputeCache, "ComputeCache", "CUDA ComputeCache", 1, 10, ""},
       Novelty::kNew},
      {{MissFramework::kTriton, "H", "entry H", 1, 10, ""}, Novelty::kNew},
  };
  for (const Case& c : cases) EXPECT_EQ(NoveltyOf(c.m, {"k(x: i32)"}), c.want) << c.m.detail;
}

TEST(RecordRunTest, CountsEveryEntryAndKeepsNewOnesFirst) {
  std::vector<RuntimeMiss> added;
  added.push_back({MissFramework::kTriton, "A", "kernel k num_warps=8", 3, 300, "k(x: i32)"});
  added.push_back({MissFramework::kTriton, "B", "kernel j num_warps=4", 2, 200, "j(x: i32)"});
  added.push_back({MissFramework::kInductor, "ab/c.best_config", "generated module c", 1, 5, ""});
  const RunRecord r = RecordRun(2, added, {"k(x: i32)"});
  EXPECT_EQ(r.index, 2);
  EXPECT_EQ(r.entries_added, 3U);
  EXPECT_EQ(r.autotune_entries, 2U);
  EXPECT_EQ(r.files_added, 6U);
  EXPECT_EQ(r.bytes_added, 505U);
  EXPECT_EQ(r.by_framework, (std::map<std::string, std::uint64_t>{{"inductor", 1}, {"triton", 2}}));
  ASSERT_EQ(r.entries.size(), 3U);
  EXPECT_EQ(r.entries[0].key, "B");  // the new one first
  EXPECT_EQ(r.entries[0].novelty, Novelty::kNew);
  EXPECT_EQ(r.entries[1].novelty, Novelty::kAutotune);

  std::vector<RuntimeMiss> many;
  for (int i = 0; i < 100; ++i) {
    many.push_back({MissFramework::kTriton, "K" + std::to_string(i), "entry", 1, 1, ""});
  }
  const RunRecord big = RecordRun(1, many, {});
  EXPECT_EQ(big.entries_added, 100U);
  EXPECT_EQ(big.entries.size(), kMaxRecordedEntries);
}

ConvergenceRecord TwoPasses() {
  ConvergenceRecord r;
  r.max_passes = 3;
  r.runs.push_back(RecordRun(0, {{MissFramework::kTriton, "A", "kernel k", 3, 300, "k()"}}, {}));
  r.runs.push_back(
      RecordRun(1, {{MissFramework::kTriton, "B", "kernel late", 3, 300, "late()"}}, {"k()"}));
  r.runs.push_back(RecordRun(2, {}, {"k()", "late()"}));
  r.runs[0].duration_ms = 5100;
  r.runs[1].duration_ms = 1600;
  r.converged = true;
  return r;
}

TEST(ConvergenceRecordTest, RoundTrips) {
  const ConvergenceRecord r = TwoPasses();
  auto back = ParseConvergenceRecord(ConvergenceRecordToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, r);
  EXPECT_EQ(PassesRun(*back), 2);
}

TEST(ConvergenceRecordTest, RefusesBadShapesNamingTheField) {
  const std::string good = ConvergenceRecordToJson(TwoPasses());
  struct Case {
    std::string json;
    std::string field;
  };
  auto edit = [&](auto f) {
    nlohmann::json j = nlohmann::json::parse(good);
    f(j);
    return j.dump();
  };
  const std::vector<Case> cases = {
      {"[]", "(document)"},
      {"{", "(document)"},
      {edit([](auto& j) { j["maxPasses"] = 11; }), "maxPasses"},
      {edit([](auto& j) { j["maxPasses"] = 1; }), "runs"},  // 3 runs > 1 + 1
      {edit([](auto& j) { j["converged"] = "yes"; }), "converged"},
      {edit([](auto& j) { j["runs"] = nlohmann::json::array(); }), "runs"},
      {edit([](auto& j) { j["runs"][1]["index"] = 2; }), "runs[1].index"},
      {edit([](auto& j) { j["runs"][0]["filesAdded"] = -1; }), "runs[0].filesAdded"},
      {edit([](auto& j) { j["runs"][0]["autotuneEntries"] = 5; }), "runs[0].autotuneEntries"},
      {edit([](auto& j) { j["runs"][0]["byFramework"]["cuda"] = 1; }), "runs[0].byFramework.cuda"},
      {edit([](auto& j) { j["runs"][0]["entries"][0]["novelty"] = "old"; }),
       "runs[0].entries[0].novelty"},
      {edit([](auto& j) { j["runs"][0]["entries"][0]["detail"] = std::string(2000, 'x'); }),
       "runs[0].entries[0].detail"},
      {edit([](auto& j) { j["runs"][2]["entriesAdded"] = 1; }), "converged"},
  };
  for (const Case& c : cases) {
    auto r = ParseConvergenceRecord(c.json);
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field + ":"), std::string::npos)
        << c.field << " / " << r.status().message();
  }
}

TEST(ConvergenceMessageTest, Table) {
  ConvergenceRecord not_converged = TwoPasses();
  not_converged.converged = false;
  not_converged.runs[2] =
      RecordRun(2,
                {{MissFramework::kTriton, "C", "kernel k num_warps=16", 3, 300, "k()"},
                 {MissFramework::kTriton, "D", "kernel k num_warps=32", 3, 300, "k()"}},
                {"k()", "late()"});
  ConvergenceRecord mixed = not_converged;
  mixed.runs[2] = RecordRun(2,
                            {{MissFramework::kTriton, "C", "kernel k num_warps=16", 3, 300, "k()"},
                             {MissFramework::kTriton, "E", "kernel z", 3, 300, "z()"}},
                            {"k()"});
  struct Case {
    ConvergenceRecord r;
    std::string want;
  };
  const std::vector<Case> cases = {
      {TwoPasses(), "converged after 2 passes"},
      {not_converged,
       "not converged after 2 passes: the last pass still compiled 2 entries, all "
       "nondeterministic autotune: triton kernel k num_warps=16; triton kernel k num_warps=32"},
      {mixed,
       "not converged after 2 passes: the last pass still compiled 2 entries (1 "
       "nondeterministic autotune): triton kernel z; triton kernel k num_warps=16"},
  };
  for (const Case& c : cases) EXPECT_EQ(ConvergenceMessage(Summarize(c.r)), c.want);
}

TEST(ConvergencePolicyTest, FailOnlyRefusesARecordThatDidNotConverge) {
  ConvergenceRecord r = TwoPasses();
  EXPECT_TRUE(CheckConvergencePolicy(r, NotConvergedPolicy::kFail).ok());
  r.converged = false;
  EXPECT_TRUE(CheckConvergencePolicy(r, NotConvergedPolicy::kPublish).ok());
  Status s = CheckConvergencePolicy(r, NotConvergedPolicy::kFail);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(s.message().starts_with("NotConverged: not converged after 2 passes")) << s.message();
  EXPECT_NE(s.message().find("onNotConverged is Fail"), std::string::npos);
}

TEST(ConvergenceEnumsTest, NamesRoundTrip) {
  for (auto p : kNotConvergedPolicies)
    EXPECT_EQ(*ParseNotConvergedPolicy(NotConvergedPolicyName(p)), p);
  for (auto n : kNovelties) EXPECT_EQ(*ParseNovelty(NoveltyName(n)), n);
  auto bad = ParseNotConvergedPolicy("publish");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not one of Publish, Fail"), std::string::npos);
}

}  // namespace
}  // namespace kc::core
