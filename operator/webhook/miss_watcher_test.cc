#include "operator/webhook/miss_watcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc::webhook {
namespace {

using Json = nlohmann::json;

Json PodWith(const std::string& value) {
  return {{"metadata", {{"annotations", {{"kernelcache.io/watch-misses", value}}}}}};
}

TEST(MissWatchIntervalTest, Table) {
  struct Case {
    std::string value;
    long long want;  // seconds; 0: none; -1: refused
  };
  for (const Case& c : std::vector<Case>{{"true", 30},
                                         {"false", 0},
                                         {"10s", 10},
                                         {"2m", 120},
                                         {"1h", 3600},
                                         {"5s", 5},
                                         {"4s", -1},
                                         {"2h", -1},
                                         {"", -1},
                                         {"yes", -1},
                                         {"-5s", -1}}) {
    auto got = MissWatchInterval(PodWith(c.value));
    if (c.want < 0) {
      ASSERT_FALSE(got.ok()) << c.value;
      EXPECT_NE(got.status().message().find("annotation kernelcache.io/watch-misses"),
                std::string::npos);
      EXPECT_NE(got.status().message().find("from 5s to 1h"), std::string::npos);
    } else if (c.want == 0) {
      ASSERT_TRUE(got.ok()) << c.value;
      EXPECT_FALSE(got->has_value()) << c.value;
    } else {
      ASSERT_TRUE(got.ok()) << c.value << ": " << got.status();
      ASSERT_TRUE(got->has_value()) << c.value;
      EXPECT_EQ((*got)->count(), c.want) << c.value;
    }
  }
  auto absent = MissWatchInterval(Json{{"metadata", Json::object()}});
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  auto not_object = MissWatchInterval(Json::array());
  ASSERT_TRUE(not_object.ok());
  EXPECT_FALSE(not_object->has_value());
}

TEST(BuildMissWatcherTest, TakesTheGatesImageAndItsMountsReadOnly) {
  const Json gate = {
      {"name", "kernelcache-wait"},
      {"image", "initwarm:1"},
      {"imagePullPolicy", "Never"},
      {"volumeMounts",
       Json::array({{{"name", "kernelcache-run"}, {"mountPath", "/var/run/kernelcache"}},
                    {{"name", "kernelcache-cache"}, {"readOnly", false}}})},
      {"securityContext", {{"runAsUser", 1000}}},
      {"env", Json::array({{{"name", "KC_NODE_NAME"}}})}};
  const Json security = {{"runAsUser", 65533}};
  const Json w = BuildMissWatcher(gate, security, std::chrono::seconds(45), "");
  EXPECT_EQ(w["name"], "kernelcache-misses");
  EXPECT_EQ(w["image"], "initwarm:1");
  EXPECT_EQ(w["imagePullPolicy"], "Never");
  EXPECT_EQ(w["restartPolicy"], "Always");
  EXPECT_EQ(w["args"].back(), "45s");
  ASSERT_EQ(w["volumeMounts"].size(), 2u);
  EXPECT_EQ(w["volumeMounts"][0], (Json{{"name", "kernelcache-run"},
                                        {"mountPath", "/var/run/kernelcache"},
                                        {"readOnly", true}}));
  EXPECT_EQ(w["volumeMounts"][1]["readOnly"], true);
  // Its own security context, never the gate's (the app's uid).
  EXPECT_EQ(w["securityContext"], security);
  EXPECT_FALSE(w.contains("env"));
}

// A harvesting watcher mounts the volume's inbox root only, writable.
TEST(BuildMissWatcherTest, HarvestMountsOnlyTheInboxRoot) {
  const Json gate = {
      {"name", "kernelcache-wait"},
      {"image", "initwarm:1"},
      {"volumeMounts",
       Json::array({{{"name", "kernelcache-cache"}, {"mountPath", "/var/cache/kernelcache"}}})}};
  const Json w = BuildMissWatcher(gate, Json::object(), std::chrono::seconds(30), "http://op",
                                  WatcherHarvest{"kernelcache-cache", 64, "1048576"});
  int writable = 0;
  for (const Json& m : w["volumeMounts"]) {
    if (m.value("readOnly", false)) continue;
    ++writable;
    EXPECT_EQ(m["name"], "kernelcache-cache");
    EXPECT_EQ(m["mountPath"], "/var/cache/kernelcache-inbox");
    EXPECT_EQ(m["subPath"], "v1/.inbox");
  }
  EXPECT_EQ(writable, 1);
  EXPECT_EQ(w["env"][0]["name"], "KC_POD_UID");
}

TEST(HarvestRefusalTest, Table) {
  struct Case {
    const char* name;
    Json pod_spec;
    std::string want;  // "" = may harvest; else a piece of the reason
  } cases[] = {
      {"plain pod", {{"containers", Json::array({{{"name", "app"}}})}}, ""},
      {"not an object", Json::array(), ""},
      {"shares its process namespace",
       {{"shareProcessNamespace", true}, {"containers", Json::array()}},
       "spec.shareProcessNamespace: true"},
      {"shareProcessNamespace false", {{"shareProcessNamespace", false}}, ""},
      {"shareProcessNamespace malformed", {{"shareProcessNamespace", "yes"}}, ""},
      {"the app states the watcher's uid",
       {{"containers", Json::array({{{"securityContext", {{"runAsUser", 65533}}}}})}},
       "runs as uid 65533"},
      {"the pod states it", {{"securityContext", {{"runAsUser", 65533}}}}, "--miss-watcher-uid"},
      {"another uid", {{"securityContext", {{"runAsUser", 1000}}}}, ""},
      {"the watcher itself (a reinvocation)",
       {{"initContainers", Json::array({{{"name", "kernelcache-misses"},
                                         {"securityContext", {{"runAsUser", 65533}}}}})}},
       ""},
  };
  for (const Case& c : cases) {
    const std::string got = HarvestRefusal(c.pod_spec, 65533);
    if (c.want.empty()) {
      EXPECT_EQ(got, "") << c.name;
    } else {
      EXPECT_NE(got.find(c.want), std::string::npos) << c.name << ": " << got;
    }
  }
}

TEST(BuildMissWatcherTest, AReportUrlAddsTheReportFlagsAndTheTokenMountOnlyThere) {
  const Json gate = {{"name", "kernelcache-wait"},
                     {"image", "initwarm:1"},
                     {"volumeMounts", Json::array({{{"name", "kernelcache-run"}}})}};
  const Json w =
      BuildMissWatcher(gate, Json::object(), std::chrono::seconds(30), "http://10.96.0.20:8082");
  EXPECT_EQ(w["args"], Json::array({"misses", "--view", "/var/run/kernelcache/view", "--interval",
                                    "30s", "--report-url", "http://10.96.0.20:8082", "--token-file",
                                    "/var/run/secrets/kernelcache.io/token"}));
  ASSERT_EQ(w["volumeMounts"].size(), 2u);
  EXPECT_EQ(w["volumeMounts"][0], (Json{{"name", "kernelcache-run"}, {"readOnly", true}}));
  EXPECT_EQ(w["volumeMounts"][1], (Json{{"name", "kernelcache-token"},
                                        {"mountPath", "/var/run/secrets/kernelcache.io"},
                                        {"readOnly", true}}));
  const Json v = MissTokenVolume();
  EXPECT_EQ(v["name"], "kernelcache-token");
  const Json& sat = v["projected"]["sources"][0]["serviceAccountToken"];
  EXPECT_EQ(sat["audience"], "kernelcache.io");
  EXPECT_EQ(sat["expirationSeconds"], 3600);
  EXPECT_EQ(sat["path"], "token");
}

}  // namespace
}  // namespace kc::webhook
