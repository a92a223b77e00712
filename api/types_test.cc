#include <gtest/gtest.h>

#include "api/job.h"
#include "api/lease.h"
#include "api/meta.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/pvc.h"

namespace kc::api {
namespace {

TEST(MetaTest, DecodesEveryFieldAndRoundTrips) {
  Json j = Json::parse(R"json({
    "name": "warm-3f9a", "namespace": "ml", "uid": "u-1", "resourceVersion": "812",
    "generation": 4, "creationTimestamp": "2026-12-02T09:31:35Z",
    "deletionTimestamp": "2026-12-02T10:00:00Z",
    "labels": {"app": "llama"}, "annotations": {"a": "b"},
    "finalizers": ["kernelcache.io/cleanup"],
    "ownerReferences": [
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u-0"},
      {"apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache", "name": "kc", "uid": "u-9",
       "controller": true, "blockOwnerDeletion": true}],
    "managedFields": [{"manager": "kubectl"}]
  })json");
  ObjectMeta m = j.get<ObjectMeta>();
  EXPECT_EQ(m.name, "warm-3f9a");
  EXPECT_EQ(m.namespace_, "ml");
  EXPECT_EQ(m.uid, "u-1");
  EXPECT_EQ(m.resource_version, "812");
  EXPECT_EQ(m.generation, 4);
  EXPECT_EQ(m.labels.at("app"), "llama");
  EXPECT_EQ(m.annotations.at("a"), "b");
  EXPECT_TRUE(m.HasFinalizer("kernelcache.io/cleanup"));
  EXPECT_FALSE(m.HasFinalizer("other"));
  EXPECT_TRUE(m.BeingDeleted());
  ASSERT_EQ(m.owner_references.size(), 2u);
  ASSERT_NE(m.ControllerRef(), nullptr);
  EXPECT_EQ(m.ControllerRef()->kind, "KernelCache");
  EXPECT_TRUE(m.ControllerRef()->block_owner_deletion);

  Json back = m;
  EXPECT_FALSE(back.contains("managedFields"));  // unknown fields are not kept
  EXPECT_EQ(back.get<ObjectMeta>().owner_references, m.owner_references);
  EXPECT_EQ(back["deletionTimestamp"], "2026-12-02T10:00:00Z");
}

TEST(MetaTest, ToleratesMissingAndMistypedFields) {
  ObjectMeta m = Json::parse(R"({"name": 5, "generation": "x", "labels": []})").get<ObjectMeta>();
  EXPECT_EQ(m.name, "");
  EXPECT_EQ(m.generation, 0);
  EXPECT_TRUE(m.labels.empty());
  EXPECT_FALSE(m.BeingDeleted());
  EXPECT_EQ(Json(ObjectMeta{}), Json::object());
  EXPECT_EQ(MetaOf(Json::parse(R"({"metadata":{"name":"a"}})")).name, "a");
  EXPECT_EQ(MetaOf(Json::array()).name, "");
}

TEST(ConditionTest, FindAndRoundTrip) {
  std::vector<Condition> cs = Json::parse(R"json([
    {"type": "Ready", "status": "True", "reason": "Warm", "message": "ok",
     "observedGeneration": 3, "lastTransitionTime": "2026-12-02T09:31:35Z"},
    {"type": "Degraded", "status": "False"}])json")
                                  .get<std::vector<Condition>>();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_TRUE(IsConditionTrue(cs, "Ready"));
  EXPECT_FALSE(IsConditionTrue(cs, "Degraded"));
  EXPECT_FALSE(IsConditionTrue(cs, "Missing"));
  EXPECT_EQ(FindCondition(cs, "Ready")->observed_generation, 3);
  Json back = cs[0];
  EXPECT_EQ(back.get<Condition>(), cs[0]);
  // metav1.Condition's required fields are always written (reason, message,
  // lastTransitionTime); it was type and status alone while kube/types had
  // its own Condition encoder.
  EXPECT_EQ(Json(cs[1]), Json::parse(R"({"type":"Degraded","status":"False","reason":"",
    "message":"","observedGeneration":0,"lastTransitionTime":"1970-01-01T00:00:00Z"})"));
  EXPECT_EQ(Json(cs[1]).get<Condition>(), cs[1]);
}

TEST(NodeTest, Decodes) {
  Node n = Json::parse(R"json({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "gpu-07", "labels": {"nvidia.com/gpu.product": "NVIDIA-H200"}},
    "spec": {"unschedulable": true,
             "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
    "status": {
      "capacity": {"nvidia.com/gpu": "8", "cpu": "128", "memory": "2113638400Ki"},
      "allocatable": {"nvidia.com/gpu": "8", "cpu": "127500m"},
      "conditions": [{"type": "MemoryPressure", "status": "False"},
                     {"type": "Ready", "status": "True", "reason": "KubeletReady",
                      "lastHeartbeatTime": "2026-12-02T09:31:35Z"}]}
  })json")
               .get<Node>();
  EXPECT_EQ(n.metadata.labels.at("nvidia.com/gpu.product"), "NVIDIA-H200");
  EXPECT_TRUE(n.unschedulable);
  ASSERT_EQ(n.taints.size(), 1u);
  EXPECT_EQ(n.taints[0], (Taint{"nvidia.com/gpu", "present", "NoSchedule"}));
  EXPECT_EQ(n.capacity.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(n.allocatable.at("cpu"), "127500m");
  EXPECT_TRUE(n.Ready());

  Node not_ready =
      Json::parse(R"({"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})").get<Node>();
  EXPECT_FALSE(not_ready.Ready());
  EXPECT_FALSE(Json::object().get<Node>().Ready());
}

TEST(PodTest, DecodesContainerResults) {
  Pod p = Json::parse(R"json({
    "metadata": {"name": "warm-abc", "namespace": "ml"},
    "spec": {"nodeName": "gpu-07"},
    "status": {
      "phase": "Failed",
      "conditions": [{"type": "PodScheduled", "status": "True"}],
      "initContainerStatuses": [
        {"name": "prepare", "ready": false, "restartCount": 0, "image": "kc:1", "imageID": "sha",
         "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                  "message": "{\"ok\":true}", "containerID": "containerd://c1",
                                  "startedAt": "2026-12-02T09:31:30Z",
                                  "finishedAt": "2026-12-02T09:31:35Z"}}},
        {"name": "warmup", "ready": false, "restartCount": 1,
         "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
         "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "message": "boom"}}}],
      "containerStatuses": [
        {"name": "seal", "ready": false, "restartCount": 0,
         "state": {"waiting": {"reason": "PodInitializing"}}}]}
  })json")
              .get<Pod>();
  EXPECT_EQ(p.node_name, "gpu-07");
  EXPECT_EQ(p.phase, "Failed");
  ASSERT_EQ(p.init_container_statuses.size(), 2u);
  const ContainerStatus* prepare = p.FindContainerStatus("prepare");
  ASSERT_NE(prepare, nullptr);
  ASSERT_TRUE(prepare->terminated.has_value());
  EXPECT_EQ(prepare->terminated->message, "{\"ok\":true}");
  EXPECT_EQ(prepare->terminated->reason, "Completed");
  EXPECT_EQ(prepare->image_id, "sha");
  EXPECT_EQ(prepare->terminated->container_id, "containerd://c1");
  ASSERT_TRUE(prepare->terminated->started_at && prepare->terminated->finished_at);
  EXPECT_EQ(*prepare->terminated->finished_at - *prepare->terminated->started_at,
            std::chrono::seconds(5));
  const ContainerStatus* warmup = p.FindContainerStatus("warmup");
  ASSERT_NE(warmup, nullptr);
  EXPECT_EQ(warmup->terminated->exit_code, 137);
  EXPECT_EQ(warmup->last_terminated->message, "boom");
  EXPECT_EQ(warmup->restart_count, 1);
  const ContainerStatus* seal = p.FindContainerStatus("seal");
  ASSERT_NE(seal, nullptr);
  EXPECT_EQ(seal->waiting_reason, "PodInitializing");
  EXPECT_FALSE(seal->terminated.has_value());
  EXPECT_FALSE(seal->running);
  EXPECT_EQ(p.FindContainerStatus("nope"), nullptr);
}

TEST(JobTest, Decodes) {
  Job j = Json::parse(R"json({
    "metadata": {"name": "warm-3f9a", "uid": "job-uid"},
    "status": {"active": 0, "succeeded": 1, "failed": 2, "startTime": "2026-12-02T09:00:00Z",
               "completionTime": "2026-12-02T09:10:00Z",
               "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                              {"type": "Complete", "status": "True"}]}
  })json")
              .get<Job>();
  EXPECT_EQ(j.metadata.uid, "job-uid");
  EXPECT_EQ(j.succeeded, 1);
  EXPECT_EQ(j.failed, 2);
  EXPECT_TRUE(j.Complete());
  EXPECT_FALSE(j.Failed());
  EXPECT_TRUE(j.Finished());
  ASSERT_TRUE(j.completion_time.has_value());
  EXPECT_EQ(FormatTime(*j.completion_time), "2026-12-02T09:10:00Z");
  Job running = Json::parse(R"({"status":{"active":1}})").get<Job>();
  EXPECT_EQ(running.active, 1);
  EXPECT_FALSE(running.Finished());
}

TEST(PvcTest, Decodes) {
  PersistentVolumeClaim pvc = Json::parse(R"json({
    "metadata": {"name": "kc-llama"},
    "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs",
             "resources": {"requests": {"storage": "20Gi"}}, "volumeName": "pv-1"},
    "status": {"phase": "Bound", "capacity": {"storage": "20Gi"}}
  })json")
                                  .get<PersistentVolumeClaim>();
  EXPECT_TRUE(pvc.HasAccessMode("ReadWriteMany"));
  EXPECT_FALSE(pvc.HasAccessMode("ReadWriteOnce"));
  EXPECT_EQ(pvc.storage_class_name, "nfs");
  EXPECT_EQ(pvc.requested_storage, "20Gi");
  EXPECT_EQ(pvc.volume_name, "pv-1");
  EXPECT_TRUE(pvc.Bound());
  EXPECT_EQ(pvc.capacity.at("storage"), "20Gi");
}

TEST(LeaseTest, RoundTrip) {
  Json j = Json::parse(R"json({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "kernelcache-operator", "namespace": "kc", "resourceVersion": "5"},
    "spec": {"holderIdentity": "pod-a", "leaseDurationSeconds": 15,
             "acquireTime": "2026-12-02T09:31:35.123456Z", "renewTime": "2026-12-02T09:31:45.000001Z",
             "leaseTransitions": 2}
  })json");
  Lease l = j.get<Lease>();
  EXPECT_EQ(l.spec.holder_identity, "pod-a");
  EXPECT_EQ(l.spec.lease_duration_seconds, 15);
  EXPECT_EQ(l.spec.lease_transitions, 2);
  ASSERT_TRUE(l.spec.renew_time.has_value());
  EXPECT_EQ(FormatMicroTime(*l.spec.renew_time), "2026-12-02T09:31:45.000001Z");
  EXPECT_EQ(l.metadata.resource_version, "5");
  Json back = l;
  EXPECT_EQ(back["spec"], j["spec"]);
  EXPECT_EQ(back["kind"], "Lease");
  EXPECT_EQ(Json(LeaseSpec{}), Json::object());
}

}  // namespace
}  // namespace kc::api
