#include "operator/webhook/parity.h"

#include <gtest/gtest.h>

namespace kc::webhook {
namespace {

using Json = nlohmann::json;

TEST(NormalizeImageRefTest, Table) {
  for (const auto& [in, want] : std::vector<std::pair<std::string, std::string>>{
           {"python", "docker.io/library/python:latest"},
           {"python:3.12", "docker.io/library/python:3.12"},
           {"org/app:1", "docker.io/org/app:1"},
           {"ghcr.io/org/app:1", "ghcr.io/org/app:1"},
           {"localhost/app", "localhost/app:latest"},
           {"registry:5000/app", "registry:5000/app:latest"},
           {"kernelcache.local/jit-workload:dev", "kernelcache.local/jit-workload:dev"},
           {"app@sha256:ab", "docker.io/library/app@sha256:ab"},
       }) {
    EXPECT_EQ(NormalizeImageRef(in), want) << in;
  }
  EXPECT_TRUE(SameImage("python:3.12", "docker.io/library/python:3.12"));
  EXPECT_TRUE(SameImage("a.io/x:1@sha256:ab", "b.io/y@sha256:ab"));
  EXPECT_FALSE(SameImage("a.io/x@sha256:ab", "a.io/x@sha256:cd"));
  EXPECT_FALSE(SameImage("python:3.12", "python:3.11"));
  EXPECT_FALSE(SameImage("python", "python:3.12"));
}

Json Spec(Json containers) { return {{"containers", std::move(containers)}}; }

TEST(ParityGapsTest, Table) {
  core::RuntimeFacts warmed;
  warmed.image = "ghcr.io/org/server:1.0";
  warmed.env = {{"TORCHINDUCTOR_MAX_AUTOTUNE", "1"}};
  const Json env_ok = Json::array({{{"name", "TORCHINDUCTOR_MAX_AUTOTUNE"}, {"value", "1"}}});
  struct Case {
    const char* name;
    Json spec;
    std::vector<ParityGap> want;
  };
  for (const Case& c : std::vector<Case>{
           {"the warmed image and env",
            Spec({{{"name", "server"}, {"image", "ghcr.io/org/server:1.0"}, {"env", env_ok}}}),
            {}},
           {"a sidecar beside the serving container is not compared",
            Spec({{{"name", "envoy"}, {"image", "envoy:1"}},
                  {{"name", "server"}, {"image", "ghcr.io/org/server:1.0"}, {"env", env_ok}}}),
            {}},
           {"another image",
            Spec({{{"name", "server"}, {"image", "ghcr.io/org/server:1.1"}, {"env", env_ok}}}),
            {{ParityField::kImage,
              "no container runs the warmed image ghcr.io/org/server:1.0 (server runs "
              "ghcr.io/org/server:1.1)"}}},
           {"a keyed variable with another value",
            Spec({{{"name", "server"},
                   {"image", "ghcr.io/org/server:1.0"},
                   {"env",
                    Json::array({{{"name", "TORCHINDUCTOR_MAX_AUTOTUNE"}, {"value", "0"}}})}}}),
            {{ParityField::kEnv,
              "TORCHINDUCTOR_MAX_AUTOTUNE is \"1\" in the warmup, \"0\" in container server"}}},
           {"a keyed variable unset",
            Spec({{{"name", "server"}, {"image", "ghcr.io/org/server:1.0"}}}),
            {{ParityField::kEnv,
              "TORCHINDUCTOR_MAX_AUTOTUNE is \"1\" in the warmup, unset in container server"}}},
           {"unset, but envFrom may set it",
            Spec({{{"name", "server"},
                   {"image", "ghcr.io/org/server:1.0"},
                   {"envFrom", Json::array({{{"configMapRef", {{"name", "cfg"}}}}})}}}),
            {}},
           {"valueFrom cannot be known",
            Spec({{{"name", "server"},
                   {"image", "ghcr.io/org/server:1.0"},
                   {"env", Json::array({{{"name", "TORCHINDUCTOR_MAX_AUTOTUNE"},
                                         {"valueFrom", {{"fieldRef", {}}}}}})}}}),
            {}},
           {"a keyed variable only the pod sets; other and cache-view variables are not",
            Spec({{{"name", "server"},
                   {"image", "ghcr.io/org/server:1.0"},
                   {"env", Json::array({{{"name", "TORCHINDUCTOR_MAX_AUTOTUNE"}, {"value", "1"}},
                                        {{"name", "VLLM_USE_V1"}, {"value", "0"}},
                                        {{"name", "HOME"}, {"value", "/root"}},
                                        {{"name", "TRITON_CACHE_DIR"}, {"value", "/x"}}})}}}),
            {{ParityField::kEnv, "VLLM_USE_V1 is \"0\" in container server, unset in the warmup"}}},
           {"no containers: nothing to compare", Json::object(), {}},
           {"hostile shapes",
            Spec(Json::array({7, {{"env", "x"}}})),
            {{ParityField::kImage,
              "no container runs the warmed image ghcr.io/org/server:1.0 ( runs , "
              " runs )"}}},
       }) {
    EXPECT_EQ(ParityGaps(c.spec, warmed), c.want) << c.name;
  }
}

// The server form: the pod's command, args and GPU count against the
// warmed template's serving container.
TEST(ParityGapsTest, ServerForm) {
  core::ServingContainer warmed;
  warmed.name = "server";
  warmed.image = "ghcr.io/org/server:1.0";
  warmed.command = {"python3", "/app/serve.py"};
  warmed.args = {"--ranks", "2"};
  warmed.gpus = 2;
  core::RuntimeFacts facts;
  facts.image = warmed.image;
  auto pod = [&](Json args, const std::string& gpus) {
    return Spec({{{"name", "server"},
                  {"image", warmed.image},
                  {"command", {"python3", "/app/serve.py"}},
                  {"args", std::move(args)},
                  {"resources", {{"limits", {{"nvidia.com/gpu", gpus}}}}}}});
  };
  EXPECT_TRUE(ParityGaps(pod({"--ranks", "2"}, "2"), facts, &warmed).empty());
  EXPECT_TRUE(ParityGaps(pod({"--ranks", "4"}, "4"), facts).empty())
      << "the command form compares no command";
  const auto gaps = ParityGaps(pod({"--ranks", "4"}, "4"), facts, &warmed);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].field, ParityField::kCommand);
  EXPECT_EQ(gaps[0].detail, "args of container server is [--ranks 4], the warmup ran [--ranks 2]");
  EXPECT_EQ(gaps[1].field, ParityField::kGpus);
  EXPECT_EQ(gaps[1].detail, "the pod asks for 4 nvidia.com/gpu, the warmup ran on 2");
  EXPECT_EQ(ParityText(gaps).substr(0, 9), "command: ");
}

TEST(ParityTextTest, NamesEachFieldAndIsBounded) {
  EXPECT_EQ(ParityText({{ParityField::kImage, "a"}, {ParityField::kEnv, "b"}}), "image: a; env: b");
  const std::string long_text = ParityText({{ParityField::kEnv, std::string(5000, 'x')}});
  EXPECT_LE(long_text.size(), 1024u);
  EXPECT_EQ(ParityText({}), "");
}

}  // namespace
}  // namespace kc::webhook
