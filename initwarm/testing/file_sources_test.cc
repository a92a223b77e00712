#include "initwarm/testing/file_sources.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "initwarm/testing/test_util.h"

namespace kc::initwarm::testing {
namespace {

const std::string kFacts =
    R"({"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04",)"
    R"("cudaDriver":"13.0","arch":"amd64"})";

TEST(FileSources, AProberReadsFactsAndNamesItsSource) {
  ScratchDir d;
  const auto path = d.path() / "facts.json";
  { std::ofstream(path) << kFacts; }
  auto r = NewFileProber(path.string())->Probe();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->facts.gpu_product, "NVIDIA-H200");
  EXPECT_EQ(r->source, "file:" + path.string());
  { std::ofstream(path) << "{"; }
  auto bad = NewFileProber(path.string())->Probe();
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status();
  EXPECT_NE(bad.status().message().find("probe facts file"), std::string::npos);
  auto gone = NewFileProber((d.path() / "none").string())->Probe();
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
}

TEST(FileSources, AResolverReadsAnAnswerFile) {
  ScratchDir d;
  const auto path = d.path() / "answer.json";
  {
    std::ofstream(path) << R"({"fingerprint":"0123456789abcdef","state":"Ready","node":)" << kFacts
                        << "}";
  }
  auto a = NewFileResolver(path.string())->Resolve("ns", "kc", "n");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->state, core::ResolveState::kReady);
  EXPECT_EQ(NewFileResolver((d.path() / "none").string())->Resolve("ns", "kc", "n").status().code(),
            StatusCode::kNotFound);
}

TEST(FileSources, SeamsCarryBoth) {
  const Seams s = FileSeams();
  EXPECT_TRUE(s.file_prober);
  EXPECT_TRUE(s.file_resolver);
}

}  // namespace
}  // namespace kc::initwarm::testing
