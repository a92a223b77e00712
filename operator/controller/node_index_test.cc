#include "operator/controller/node_index.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace kc::op {
namespace {

using Labels = std::map<std::string, std::string>;

NodeView Node(const std::string& name, Labels labels) {
  NodeView n;
  n.name = name;
  n.labels = std::move(labels);
  return n;
}

std::vector<std::string> Names(const std::vector<NodeView>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.push_back(n.name);
  return out;
}

const Labels kH100 = {
    {"nvidia.com/gpu.present", "true"}, {"nvidia.com/gpu.product", "H100"}, {"driver", "570"}};
const Labels kH200 = {
    {"nvidia.com/gpu.present", "true"}, {"nvidia.com/gpu.product", "H200"}, {"driver", "570"}};

TEST(NodeIndexTest, SelectedMatchesEveryPairOfTheSelector) {
  NodeIndex index;
  index.Upsert(Node("c", kH100));
  index.Upsert(Node("a", kH100));
  index.Upsert(Node("b", kH200));
  index.Upsert(Node("d", {{"role", "cpu"}}));
  struct Case {
    std::string name;
    Labels selector;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"empty selector: every node, by name", {}, {"a", "b", "c", "d"}},
      {"one pair", {{"nvidia.com/gpu.product", "H100"}}, {"a", "c"}},
      {"a pair many nodes share", {{"nvidia.com/gpu.present", "true"}}, {"a", "b", "c"}},
      {"two pairs", {{"nvidia.com/gpu.present", "true"}, {"driver", "570"}}, {"a", "b", "c"}},
      {"pairs no one node has together", {{"nvidia.com/gpu.product", "H100"}, {"role", "cpu"}}, {}},
      {"a value no node carries", {{"nvidia.com/gpu.product", "B200"}}, {}},
      {"a key no node carries", {{"zone", "a"}}, {}},
      {"key and value are not confused", {{"nvidia.com/gpu.product=H100", ""}}, {}},
  };
  for (const auto& c : cases) EXPECT_EQ(Names(index.Selected(c.selector)), c.want) << c.name;
}

TEST(NodeIndexTest, UpsertReplacesAndRemoveForgets) {
  NodeIndex index;
  index.Upsert(Node("a", kH100));
  index.Upsert(Node("b", kH100));
  const Labels h100 = {{"nvidia.com/gpu.product", "H100"}};
  const Labels driver = {{"driver", "580"}};
  // A driver upgrade relabels a: it leaves the old pair's list, joins the new one.
  Labels upgraded = kH100;
  upgraded["driver"] = "580";
  NodeView a = Node("a", upgraded);
  a.unschedulable = true;
  index.Upsert(a);
  EXPECT_EQ(Names(index.Selected(driver)), std::vector<std::string>{"a"});
  EXPECT_EQ(Names(index.Selected({{"driver", "570"}})), std::vector<std::string>{"b"});
  EXPECT_EQ(Names(index.Selected(h100)), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(index.Get("a").has_value());
  EXPECT_TRUE(index.Get("a")->unschedulable);
  EXPECT_EQ(index.size(), 2u);

  auto removed = index.Remove("a");
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(removed->name, "a");
  EXPECT_TRUE(removed->unschedulable);
  EXPECT_FALSE(index.Remove("never-there").has_value());
  EXPECT_FALSE(index.Get("a").has_value());
  EXPECT_TRUE(index.Selected(driver).empty());
  EXPECT_EQ(Names(index.Selected(h100)), std::vector<std::string>{"b"});
  EXPECT_EQ(index.size(), 1u);
}

TEST(NodeIndexTest, IndexesOnlyTheKeysSelectorsAskForAndStaysRightAfterChanges) {
  NodeIndex index;
  index.Upsert(Node("a", kH100));
  index.Upsert(Node("b", kH200));
  EXPECT_EQ(index.indexed_keys(), 0u);  // nothing asked yet
  EXPECT_EQ(Names(index.Selected({{"nvidia.com/gpu.product", "H100"}})),
            std::vector<std::string>{"a"});
  EXPECT_EQ(index.indexed_keys(), 1u);
  // Nodes added, changed and removed after the key was indexed.
  index.Upsert(Node("c", kH100));
  Labels moved = kH100;
  moved["nvidia.com/gpu.product"] = "H200";
  index.Upsert(Node("a", moved));
  EXPECT_EQ(Names(index.Selected({{"nvidia.com/gpu.product", "H100"}})),
            std::vector<std::string>{"c"});
  EXPECT_EQ(Names(index.Selected({{"nvidia.com/gpu.product", "H200"}})),
            (std::vector<std::string>{"a", "b"}));
  index.Remove("b");
  EXPECT_EQ(Names(index.Selected({{"nvidia.com/gpu.product", "H200"}})),
            std::vector<std::string>{"a"});
  EXPECT_EQ(Names(index.Selected({{"nvidia.com/gpu.present", "true"}, {"driver", "570"}})),
            (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(index.indexed_keys(), 3u);
}

TEST(NodeIndexTest, BeyondTheIndexedKeysSelectorsStillMatchByFiltering) {
  NodeIndex index;
  for (size_t i = 0; i < NodeIndex::kMaxIndexedKeys + 3; ++i) {
    Labels l = kH100;
    l["k" + std::to_string(i)] = "v";
    index.Upsert(Node("n" + std::to_string(i), l));
  }
  for (size_t i = 0; i < NodeIndex::kMaxIndexedKeys + 3; ++i) {
    EXPECT_EQ(Names(index.Selected({{"k" + std::to_string(i), "v"}})),
              std::vector<std::string>{"n" + std::to_string(i)})
        << i;
  }
  EXPECT_EQ(index.indexed_keys(), NodeIndex::kMaxIndexedKeys);
  EXPECT_EQ(Names(index.Selected({{"k40", "v"}})), std::vector<std::string>{});
}

TEST(NodeIndexTest, UpsertFromJsonParsesTheView) {
  NodeIndex index;
  index.Upsert(Json::parse(R"({"metadata": {"name": "gpu-1", "labels": {"a": "b"}},
    "status": {"allocatable": {"nvidia.com/gpu": "8"},
               "conditions": [{"type": "Ready", "status": "True"}]}})"));
  auto n = index.Get("gpu-1");
  ASSERT_TRUE(n.has_value());
  EXPECT_TRUE(n->ready);
  EXPECT_EQ(n->gpu_allocatable, 8);
  EXPECT_EQ(Names(index.Selected({{"a", "b"}})), std::vector<std::string>{"gpu-1"});
}

}  // namespace
}  // namespace kc::op
