#include "initwarm/warmup/converge.h"

#include <gtest/gtest.h>

#include <sstream>

#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::ScratchDir;

TEST(AddedFilesTest, Table) {
  const TreeListing before = {{"nv", 0, 1, true},
                              {"nv/index", 10, 1, false},
                              {"triton", 0, 1, true},
                              {"triton/A", 0, 1, true},
                              {"triton/A/k.json", 100, 1, false}};
  struct Case {
    const char* name;
    TreeListing after;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"nothing changed", before, {}},
      {"a new file",
       [&] {
         TreeListing t = before;
         t.push_back({"triton/B/k.json", 5, 2, false});
         return t;
       }(),
       {"triton/B/k.json"}},
      {"a changed file outside nv/",
       [&] {
         TreeListing t = before;
         t[4].mtime_ns = 2;
         return t;
       }(),
       {"triton/A/k.json"}},
      {"the ComputeCache index rewritten in place",
       [&] {
         TreeListing t = before;
         t[1].size = 20;
         t[1].mtime_ns = 3;
         return t;
       }(),
       {}},
      {"a new ComputeCache entry",
       [&] {
         TreeListing t = before;
         t.push_back({"nv/ab/cd", 7, 3, false});
         return t;
       }(),
       {"nv/ab/cd"}},
      {"a new directory alone",
       [&] {
         TreeListing t = before;
         t.push_back({"triton/C", 0, 3, true});
         return t;
       }(),
       {}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> got;
    for (const auto& e : AddedFiles(before, c.after)) got.push_back(e.path);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

// A staging directory with the view pointing at it, as prepare leaves them.
struct Staged {
  ScratchDir dir;
  fs::path staging = dir.path() / "staging";
  fs::path view = dir.path() / "view";
  fs::path record = dir.path() / "convergence.json";
  Staged() {
    fs::create_directories(staging / "triton");
    fs::create_symlink(staging, view);
  }
};

// A warmup script: run N (counted in a file outside the cache, as a model
// image keeps state in its own filesystem) writes a Triton kernel named by
// `names[N]` into the view, or nothing past the list.
std::vector<std::string> Warmup(const Staged& s, const std::string& names) {
  const std::string counter = (s.dir.path() / "runs").string();
  return {"sh", "-c",
          "n=$(cat " + counter + " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + counter +
              "; set -- " + names +
              "; eval k=\\${$n:-}; [ -z \"$k\" ] && exit 0; "
              "mkdir -p " +
              s.view.string() +
              "/triton/H$n && "
              "printf '{\"name\":\"%s\",\"num_warps\":%d}' ${k%%:*} ${k##*:} > " +
              s.view.string() + "/triton/H$n/${k%%:*}.json"};
}

TEST(ConvergeTest, AKernelCompiledOnlyOnTheSecondRunConvergesAfterTwoPasses) {
  Staged s;
  std::ostringstream log;
  ConvergeOptions o{s.view, Warmup(s, "first:4 late:4"), 3, s.record};
  auto r = Converge(o, log);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->end, core::PassStep::kConverged) << log.str();
  ASSERT_EQ(r->record.runs.size(), 3U) << log.str();
  EXPECT_EQ(r->record.runs[0].entries_added, 1U);
  EXPECT_EQ(r->record.runs[1].entries_added, 1U);
  EXPECT_EQ(r->record.runs[1].entries[0].novelty, core::Novelty::kNew);
  EXPECT_NE(r->record.runs[1].entries[0].detail.find("kernel late"), std::string::npos);
  EXPECT_EQ(r->record.runs[2].entries_added, 0U);
  EXPECT_TRUE(r->record.converged);
  EXPECT_NE(log.str().find("converged after 2 passes"), std::string::npos) << log.str();
  auto written = core::ParseConvergenceRecord(ReadFile(s.record));
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(*written, r->record);
}

TEST(ConvergeTest, AnAutotunerThatNeverSettlesStopsAtTheBound) {
  Staged s;
  std::ostringstream log;
  ConvergeOptions o{s.view, Warmup(s, "k:1 k:2 k:4 k:8 k:16"), 2, s.record};
  auto r = Converge(o, log);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->end, core::PassStep::kNotConverged);
  ASSERT_EQ(r->record.runs.size(), 3U);
  EXPECT_FALSE(r->record.converged);
  // One kernel at other num_warps in every run: autotune variants of a
  // kernel the tree already held.
  EXPECT_EQ(r->record.runs[2].entries_added, 1U);
  EXPECT_EQ(r->record.runs[2].autotune_entries, 1U);
  EXPECT_NE(log.str().find("all nondeterministic autotune"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("not converged after 2 passes"), std::string::npos) << log.str();
}

TEST(ConvergeTest, AFailingWarmupEndsTheLoopWithItsExitCode) {
  Staged s;
  std::ostringstream log;
  ConvergeOptions o{s.view, {"sh", "-c", "exit 7"}, 3, s.record};
  auto r = Converge(o, log);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->end, core::PassStep::kFailed);
  EXPECT_EQ(r->exit_code, 7);
  ASSERT_EQ(r->record.runs.size(), 1U);
  EXPECT_EQ(r->record.runs[0].exit_code, 7);
}

TEST(ConvergeTest, RefusesAViewThatIsNotASymlinkAndBadOptions) {
  Staged s;
  std::ostringstream log;
  EXPECT_EQ(Converge({s.staging, {"true"}, 3, s.record}, log).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Converge({s.view, {}, 3, s.record}, log).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Converge({s.view, {"true"}, 0, s.record}, log).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kc::initwarm
