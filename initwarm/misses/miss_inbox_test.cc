#include "initwarm/misses/miss_inbox.h"

#include <gtest/gtest.h>

#include "core/fingerprint.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

NewEntry New(std::string path, std::uint64_t size) {
  return {std::move(path), NewEntryKind::kNew, size};
}

std::vector<std::string> Paths(const std::vector<NewEntry>& es) {
  std::vector<std::string> out;
  for (const auto& e : es) out.push_back(e.path);
  return out;
}

TEST(DueForInbox, OnlySettledNewHarvestableFilesWithinTheCaps) {
  InboxState s;
  s.last_sizes = {{"triton/a/k.cubin", 10}, {"triton/a/k.json", 5}, {"triton/b/k", 7},
                  {"nv/ComputeCache/x", 3}, {"inductor/c/d", 4},    {"triton/d/k", 1}};
  s.copied_paths = {"triton/d/k"};
  s.copied = {{"triton/d/k", 1, std::string(64, 'a')}};
  s.copied_bytes = 1;
  const std::vector<NewEntry> entries = {
      New("inductor/c/d", 4),
      New("nv/ComputeCache/x", 3),                       // never harvested
      {"triton/a/k.cubin", NewEntryKind::kChanged, 10},  // a published file
      New("triton/a/k.json", 5),
      New("triton/b/k", 9),  // still growing
      New("triton/d/k", 1),  // copied already
      New("triton/e/k", 2),  // first seen now
  };
  EXPECT_EQ(Paths(DueForInbox(entries, s, 100, 1000)),
            (std::vector<std::string>{"inductor/c/d", "triton/a/k.json"}));
  // Caps count what was copied before: one more file, or 5 more bytes.
  EXPECT_EQ(Paths(DueForInbox(entries, s, 2, 1000)), std::vector<std::string>{"inductor/c/d"});
  EXPECT_EQ(Paths(DueForInbox(entries, s, 100, 6)), std::vector<std::string>{"inductor/c/d"});
  EXPECT_TRUE(DueForInbox(entries, s, 100, 4).empty());
}

TEST(DueForInbox, WholeEntriesOnly) {
  InboxState s;
  s.last_sizes = {{"triton/a/k.cubin", 10}, {"triton/a/__grp__k.json", 5}, {"triton/b/k", 1}};
  const std::vector<NewEntry> entries = {New("triton/a/__grp__k.json", 5),
                                         New("triton/a/k.cubin", 10), New("triton/a/k.json", 3),
                                         New("triton/b/k", 1)};
  // triton/a has a file not settled yet: none of it goes, not even its group file.
  EXPECT_EQ(Paths(DueForInbox(entries, s, 100, 1000)), std::vector<std::string>{"triton/b/k"});
  s.last_sizes["triton/a/k.json"] = 3;
  EXPECT_EQ(Paths(DueForInbox(entries, s, 100, 1000)),
            (std::vector<std::string>{"triton/a/__grp__k.json", "triton/a/k.cubin",
                                      "triton/a/k.json", "triton/b/k"}));
  // An entry that does not fit whole is left out whole.
  EXPECT_EQ(Paths(DueForInbox(entries, s, 2, 1000)), std::vector<std::string>{"triton/b/k"});
}

TEST(UpdateInbox, CopiesSettledFilesOnceAtomicallyWithTheirDigest) {
  testing::ScratchDir d;
  const fs::path tree = d.path() / "copy-0123456789abcdef-1";
  const fs::path inbox = d.path() / "inbox";
  WriteFile(tree / "triton/h/k.cubin", "cubin bytes");
  WriteFile(tree / "triton/h/k.json", R"({"name":"k"})");
  fs::create_symlink("/etc/hostname", tree / "triton/h/link");
  ViewScan scan{
      tree,
      ViewKind::kCopy,
      {New("triton/h/k.cubin", 11), New("triton/h/k.json", 12), New("triton/h/link", 40)}};
  InboxState s;
  // First pass: nothing has settled yet.
  EXPECT_TRUE(UpdateInbox(scan, inbox, 10, 1000, &s).empty());
  EXPECT_FALSE(Exists(inbox / "triton/h/k.cubin"));
  // Second pass: both files are copied; the symlink is refused, named.
  auto lines = UpdateInbox(scan, inbox, 10, 1000, &s);
  ASSERT_EQ(s.copied.size(), 2u);
  EXPECT_EQ(ReadFile(inbox / "triton/h/k.cubin"), "cubin bytes");
  EXPECT_EQ(s.copied[0].sha256, core::Sha256Hex("cubin bytes"));
  EXPECT_EQ(s.copied_bytes, 23);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_NE(all.find("not harvested: triton/h/link"), std::string::npos) << all;
  // The list names the copies; its ref is what the report carries.
  auto list = core::ParseHarvestList(ReadFile(inbox / ".list.json"));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, s.copied);
  EXPECT_EQ(core::RefOf(*list).sha256, core::Sha256Hex(ReadFile(inbox / ".list.json")));
  // No temporary file is left next to the copies.
  for (const auto& e : fs::recursive_directory_iterator(inbox)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
  // Third pass: nothing again (each file is copied once).
  UpdateInbox(scan, inbox, 10, 1000, &s);
  EXPECT_EQ(s.copied.size(), 2u);
}

// The app writes the view: a kernel directory swapped for a symlink to
// elsewhere after the scan, holding a file of the scanned name and size,
// or a file hard-linked from elsewhere, is refused, never copied.
TEST(CopyToInbox, NeverFollowsTheViewOutOfItself) {
  testing::ScratchDir d;
  const fs::path tree = d.path() / "copy-0123456789abcdef-1";
  const fs::path outside = d.path() / "outside";
  WriteFile(tree / "triton/h/k.cubin", "cubin bytes");
  WriteFile(outside / "k.cubin", "SECRET-BYTE");  // 11 bytes, as scanned
  ASSERT_TRUE(CopyToInbox(tree, New("triton/h/k.cubin", 11), d.path() / "inbox1").ok());

  fs::remove_all(tree / "triton/h");
  fs::create_directory_symlink(outside, tree / "triton/h");
  auto swapped = CopyToInbox(tree, New("triton/h/k.cubin", 11), d.path() / "inbox2");
  EXPECT_FALSE(swapped.ok());
  EXPECT_FALSE(Exists(d.path() / "inbox2/triton/h/k.cubin"));

  fs::remove(tree / "triton/h");
  fs::create_directories(tree / "triton/h");
  fs::create_hard_link(outside / "k.cubin", tree / "triton/h/k.cubin");
  auto linked = CopyToInbox(tree, New("triton/h/k.cubin", 11), d.path() / "inbox3");
  EXPECT_FALSE(linked.ok());
  EXPECT_NE(linked.status().message().find("hard link"), std::string::npos) << linked.status();
}

TEST(UpdateInbox, WhatDoesNotFitTheCapsIsNamedOnce) {
  testing::ScratchDir d;
  const fs::path tree = d.path() / "layered-0123456789abcdef-1";
  WriteFile(tree / "triton/a/k", std::string(600, 'a'));
  WriteFile(tree / "triton/b/k", std::string(600, 'b'));
  ViewScan scan{tree, ViewKind::kLayered, {New("triton/a/k", 600), New("triton/b/k", 600)}};
  InboxState s;
  UpdateInbox(scan, d.path() / "inbox", 10, 1000, &s);
  auto lines = UpdateInbox(scan, d.path() / "inbox", 10, 1000, &s);
  ASSERT_EQ(s.copied.size(), 1u);
  EXPECT_EQ(s.copied[0].path, "triton/a/k");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("past this pod's harvest caps"), std::string::npos) << lines[1];
  EXPECT_TRUE(UpdateInbox(scan, d.path() / "inbox", 10, 1000, &s).empty());
}

}  // namespace
}  // namespace kc::initwarm
