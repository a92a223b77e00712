#include "operator/controller/selector_index.h"

#include <gtest/gtest.h>

#include <thread>

namespace kc::op {
namespace {

using Selector = SelectorIndex::Selector;

bool HasGpu(const Selector& s) { return s.count("gpu") > 0; }

TEST(SelectorIndexTest, SetEraseAndMatch) {
  SelectorIndex index;
  index.Set("ml/b", {{"gpu", "h200"}});
  index.Set("ml/a", {{"gpu", "b200"}});
  index.Set("ml/c", {{"role", "cpu"}});
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.KeysWhere(HasGpu), (std::vector<std::string>{"ml/a", "ml/b"}));
  index.Set("ml/a", {{"role", "cpu"}});  // a new selector replaces the old
  EXPECT_EQ(index.KeysWhere(HasGpu), (std::vector<std::string>{"ml/b"}));
  index.Erase("ml/b");
  index.Erase("ml/none");  // erasing what is not there is harmless
  EXPECT_TRUE(index.KeysWhere(HasGpu).empty());
  EXPECT_EQ(index.size(), 2u);
}

TEST(SelectorIndexTest, ConcurrentWritersAndReaders) {
  SelectorIndex index;
  constexpr int kKeys = 200;
  std::thread writer([&] {
    for (int i = 0; i < kKeys; ++i) index.Set("ns/" + std::to_string(i), {{"gpu", "x"}});
  });
  std::thread reader([&] {
    for (int i = 0; i < kKeys; ++i) (void)index.KeysWhere(HasGpu);
  });
  writer.join();
  reader.join();
  EXPECT_EQ(index.KeysWhere(HasGpu).size(), static_cast<size_t>(kKeys));
}

}  // namespace
}  // namespace kc::op
