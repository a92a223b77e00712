// Table tests of Decide's storage step.
#include "operator/decide/decide_storage.h"

#include <gtest/gtest.h>

#include "testing/objects.h"

namespace kc::op::decide {
namespace {

using std::chrono::seconds;

const Time kT0 = api::ParseTime("2026-12-02T10:00:00Z").value();

core::KernelCache Kc(const std::string& existing = "") {
  core::KernelCache kc = testutil::KernelCacheNamed();
  if (!existing.empty()) {
    kc.spec.storage.size.clear();
    kc.spec.storage.existing_claim = existing;
  }
  return kc;
}

PvcView Pvc(const std::string& phase, std::vector<std::string> modes = {"ReadWriteMany"}) {
  PvcView p;
  p.name = "kernelcache-llama";
  p.uid = "pvc-uid";
  p.phase = phase;
  p.access_modes = std::move(modes);
  p.owned_by_us = true;
  p.created = kT0;
  return p;
}

api::Condition Prev(bool value, const std::string& reason) {
  api::Condition c;
  c.type = "StorageReady";
  c.status = value ? "True" : "False";
  c.reason = reason;
  return c;
}

TEST(DecideStorageTest, Table) {
  Settings settings;  // pvc_binding_grace 120s
  const PvcView deleting = [] {
    auto p = Pvc("Bound");
    p.deleting = true;
    return p;
  }();
  struct Case {
    const char* name;
    core::KernelCache kc;
    std::optional<PvcView> pvc;
    std::optional<api::Condition> prev;
    Time now;
    bool usable;
    bool ready;
    std::string reason;
    bool creates;
    bool warns;
    std::optional<Time> wake;
  } cases[] = {
      {"no claim: create it", Kc(), std::nullopt, std::nullopt, kT0, true, false, "Binding", true,
       false, kT0 + seconds(120)},
      {"existing claim missing", Kc("shared"), std::nullopt, std::nullopt, kT0, false, false,
       "ClaimNotFound", false, true, std::nullopt},
      {"existing claim missing, said before", Kc("shared"), std::nullopt,
       Prev(false, "ClaimNotFound"), kT0, false, false, "ClaimNotFound", false, false,
       std::nullopt},
      {"terminating", Kc(), deleting, std::nullopt, kT0, false, false, "ClaimTerminating", false,
       true, std::nullopt},
      {"not RWX", Kc(), Pvc("Bound", {"ReadWriteOnce"}), std::nullopt, kT0, false, false,
       "NotReadWriteMany", false, true, std::nullopt},
      {"bound", Kc(), Pvc("Bound"), std::nullopt, kT0, true, true, "Bound", false, false,
       std::nullopt},
      {"pending within grace", Kc(), Pvc("Pending"), std::nullopt, kT0 + seconds(60), true, false,
       "Binding", false, false, kT0 + seconds(120)},
      {"no phase yet", Kc(), Pvc(""), std::nullopt, kT0, true, false, "Binding", false, false,
       kT0 + seconds(120)},
      {"pending past grace", Kc(), Pvc("Pending"), std::nullopt, kT0 + seconds(120), true, false,
       "WaitingForBinding", false, true, std::nullopt},
      {"pending past grace, said before", Kc(), Pvc("Pending"), Prev(false, "WaitingForBinding"),
       kT0 + seconds(300), true, false, "WaitingForBinding", false, false, std::nullopt},
      {"lost", Kc(), Pvc("Lost"), std::nullopt, kT0, false, false, "ClaimLost", false, true,
       std::nullopt},
  };
  for (const auto& c : cases) {
    const StorageVerdict v =
        DecideStorage(c.kc, c.pvc, settings, c.prev ? &*c.prev : nullptr, c.now);
    EXPECT_EQ(v.usable, c.usable) << c.name;
    EXPECT_EQ(v.ready.value, c.ready) << c.name;
    EXPECT_EQ(v.ready.reason, c.reason) << c.name;
    EXPECT_EQ(v.effects.wake, c.wake) << c.name;
    const bool created =
        !v.effects.actions.empty() && v.effects.actions[0].kind == Action::Kind::kCreatePvc;
    EXPECT_EQ(created, c.creates) << c.name;
    bool warned = false;
    for (const auto& e : v.effects.events) {
      if (e.event_type == "Warning") {
        warned = true;
        EXPECT_EQ(e.event_reason, c.reason) << c.name;
        EXPECT_EQ(e.event_message, v.ready.message) << c.name;
      }
    }
    EXPECT_EQ(warned, c.warns) << c.name;
  }
}

TEST(DecideStorageTest, CreatedClaimIsNamedAndAnnounced) {
  const StorageVerdict v = DecideStorage(Kc(), std::nullopt, Settings{}, nullptr, kT0);
  ASSERT_EQ(v.effects.actions.size(), 1u);
  EXPECT_EQ(v.effects.actions[0].name, core::ClaimName(Kc()));
  EXPECT_EQ(v.effects.actions[0].object["metadata"]["name"], core::ClaimName(Kc()));
  ASSERT_EQ(v.effects.events.size(), 1u);
  EXPECT_EQ(v.effects.events[0].event_reason, "ClaimCreated");
  EXPECT_NE(v.effects.events[0].event_message.find("of 20Gi"), std::string::npos);
}

}  // namespace
}  // namespace kc::op::decide
