#include "operator/decide/views.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

TEST(Views, Node) {
  NodeView v = NodeViewFromJson(Json::parse(R"({
    "metadata": {"name": "gpu-07", "labels": {"a": "b"}},
    "spec": {"unschedulable": true},
    "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                              {"type": "Ready", "status": "True"}],
               "allocatable": {"nvidia.com/gpu": "8", "cpu": "64"}}})"));
  EXPECT_EQ(v.name, "gpu-07");
  EXPECT_EQ(v.labels.at("a"), "b");
  EXPECT_TRUE(v.unschedulable);
  EXPECT_TRUE(v.ready);
  EXPECT_EQ(v.gpu_allocatable, 8);
  NodeView bare = NodeViewFromJson(Json::parse(R"({"metadata": {"name": "n"}})"));
  EXPECT_FALSE(bare.ready);  // no Ready condition: not ready
  EXPECT_EQ(bare.gpu_allocatable, 0);
}

TEST(Views, FailedJob) {
  JobView v = JobViewFromJson(Json::parse(R"({
    "metadata": {"name": "j", "uid": "u", "labels": {"kernelcache.io/name": "llama"},
                 "creationTimestamp": "2026-12-02T09:00:00Z"},
    "status": {"failed": 3, "conditions": [
      {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
       "message": "Job has reached the specified backoff limit",
       "lastTransitionTime": "2026-12-02T09:10:00Z"}]}})"));
  EXPECT_TRUE(v.failed_condition);
  EXPECT_FALSE(v.complete);
  EXPECT_EQ(v.failed, 3);
  EXPECT_EQ(v.failure_reason, "BackoffLimitExceeded");
  ASSERT_TRUE(v.finished.has_value());
  EXPECT_EQ(api::FormatTime(*v.finished), "2026-12-02T09:10:00Z");
  EXPECT_EQ(api::FormatTime(v.created), "2026-12-02T09:00:00Z");
}

TEST(Views, CompleteJob) {
  JobView v = JobViewFromJson(Json::parse(R"({
    "metadata": {"name": "j", "deletionTimestamp": "2026-12-02T09:11:00Z"},
    "status": {"succeeded": 1, "completionTime": "2026-12-02T09:10:00Z",
               "conditions": [{"type": "Complete", "status": "True"}]}})"));
  EXPECT_TRUE(v.complete);
  EXPECT_TRUE(v.deleting);
  EXPECT_FALSE(v.foreground_deletion);
  EXPECT_EQ(api::FormatTime(*v.finished), "2026-12-02T09:10:00Z");
}

TEST(Views, JobDeletedInTheForeground) {
  JobView v = JobViewFromJson(Json::parse(R"({
    "metadata": {"name": "j", "deletionTimestamp": "2026-12-02T09:11:00Z",
                 "finalizers": ["foregroundDeletion"]},
    "status": {"active": 1}})"));
  EXPECT_TRUE(v.deleting);
  EXPECT_TRUE(v.foreground_deletion);
}

TEST(Views, APodsJobIsItsControllerOwnerReferenceNeverItsLabels) {
  struct Case {
    const char* name;
    const char* metadata;
    const char* job_name;
    const char* job_uid;
  };
  const std::vector<Case> cases = {
      {"labels only",
       R"({"name":"p","labels":{"job-name":"j","batch.kubernetes.io/job-name":"j",
           "batch.kubernetes.io/controller-uid":"j-uid"}})",
       "", ""},
      {"the Job controller's reference",
       R"({"name":"p","ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j",
           "uid":"j-uid","controller":true}]})",
       "j", "j-uid"},
      {"a reference that is not the controller",
       R"({"name":"p","ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j",
           "uid":"j-uid"}]})",
       "", ""},
      {"a controller of another kind",
       R"({"name":"p","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet",
           "name":"j","uid":"j-uid","controller":true}]})",
       "", ""},
  };
  for (const Case& c : cases) {
    PodView v = PodViewFromJson(Json{{"metadata", Json::parse(c.metadata)}});
    EXPECT_EQ(v.job_name, c.job_name) << c.name;
    EXPECT_EQ(v.job_uid, c.job_uid) << c.name;
  }
  PodView pod;
  pod.job_name = "j";
  pod.job_uid = "j-uid";
  JobView job;
  job.name = "j";
  job.uid = "j-uid";
  EXPECT_TRUE(OfJob(pod, job));
  job.uid = "another-uid";
  EXPECT_FALSE(OfJob(pod, job)) << "the same name, another Job";
  job.uid = "";
  pod.job_uid = "";
  EXPECT_FALSE(OfJob(pod, job)) << "no uid matches nothing";
}

TEST(Views, PodSealMessageAndFailure) {
  PodView v = PodViewFromJson(Json::parse(R"({
    "metadata": {"name": "p", "labels": {"batch.kubernetes.io/job-name": "j"},
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j",
                                      "uid": "j-uid", "controller": true}]},
    "spec": {"nodeName": "gpu-07"},
    "status": {"phase": "Failed",
      "initContainerStatuses": [
        {"name": "prepare", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "warmup", "state": {"terminated": {"exitCode": 1, "reason": "Error",
                                                   "message": "CUDA out of memory"}}}],
      "containerStatuses": [
        {"name": "seal", "state": {"terminated": {"exitCode": 0, "message": "{}"}}}]}})"));
  EXPECT_EQ(v.job_name, "j");
  EXPECT_EQ(v.job_uid, "j-uid");
  EXPECT_EQ(v.node_name, "gpu-07");
  EXPECT_EQ(v.phase, "Failed");
  EXPECT_EQ(v.seal_message, "{}");
  EXPECT_EQ(v.seal_exit_code, 0);
  EXPECT_EQ(v.failure_summary, "warmup: Error (exit 1): CUDA out of memory");
}

// The warmup container's run time, from the kubelet's startedAt and
// finishedAt; none for a failed run or a run without both times.
TEST(Views, PodWarmupSeconds) {
  auto pod = [](const Json& terminated) {
    Json p = Json::parse(R"({"metadata": {"name": "p", "labels": {"job-name": "j"}},
      "status": {"phase": "Succeeded", "initContainerStatuses": [
        {"name": "prepare", "state": {"terminated": {"exitCode": 0,
          "startedAt": "2026-12-02T09:00:00Z", "finishedAt": "2026-12-02T09:00:01Z"}}},
        {"name": "warmup", "state": {}}]}})");
    p["status"]["initContainerStatuses"][1]["state"]["terminated"] = terminated;
    return PodViewFromJson(p);
  };
  const Json ran = {{"exitCode", 0},
                    {"startedAt", "2026-12-02T09:00:02Z"},
                    {"finishedAt", "2026-12-02T09:03:09Z"}};
  EXPECT_EQ(pod(ran).warmup_seconds, 187.0);
  Json failed = ran;
  failed["exitCode"] = 1;
  EXPECT_FALSE(pod(failed).warmup_seconds.has_value());
  Json unstarted = ran;
  unstarted.erase("startedAt");
  EXPECT_FALSE(pod(unstarted).warmup_seconds.has_value());
  Json backwards = ran;
  backwards["startedAt"] = "2026-12-02T09:04:00Z";
  EXPECT_FALSE(pod(backwards).warmup_seconds.has_value());
}

// seal's refusal of the warmup's tree (exit 12, core/exit_codes.h) is
// named as such, with seal's own reason and message rather than its JSON.
TEST(Views, SealRefusalIsNamedInTheFailureSummary) {
  auto pod = [](int code) {
    Json p = Json::parse(R"({
      "metadata": {"name": "p", "labels": {"job-name": "j"}},
      "status": {"phase": "Failed", "containerStatuses": [
        {"name": "seal", "state": {"terminated": {"reason": "Error", "message":
         "{\"fingerprint\":\"0123456789abcdef\",\"outcome\":\"Failed\",\"reason\":\"InvalidArgument\",\"message\":\"\\\"nv/fifo\\\" is a special file\"}"}}}]}})");
    p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] = code;
    return PodViewFromJson(p);
  };
  PodView refused = pod(12);
  EXPECT_EQ(refused.seal_exit_code, 12);
  EXPECT_EQ(refused.failure_summary,
            "seal: Error (exit 12): the warmup's output was refused (fix the warmup: a retry "
            "writes the same): InvalidArgument: \"nv/fifo\" is a special file");
  EXPECT_EQ(pod(1).failure_summary,
            "seal: Error (exit 1): InvalidArgument: \"nv/fifo\" is a special file");
}

// A server warmup: the driver (main container "seal") failed, and the
// kubelet then killed the server sidecar (exit 137). The summary is the
// driver's reason, not the kill.
TEST(Views, ServerWarmupFailureNamesTheDriverNotTheKilledSidecar) {
  PodView v = PodViewFromJson(Json::parse(R"({
    "metadata": {"name": "p", "labels": {"job-name": "j"}},
    "status": {"phase": "Failed",
      "initContainerStatuses": [
        {"name": "prepare", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "server", "state": {"terminated": {"exitCode": 137, "reason": "Error"}}}],
      "containerStatuses": [
        {"name": "seal", "state": {"terminated": {"exitCode": 13, "reason": "Error", "message":
         "{\"fingerprint\":\"0123456789abcdef\",\"outcome\":\"Failed\",\"reason\":\"Unavailable\",\"message\":\"drive: call 1 answered HTTP 500\"}"}}}]}})"));
  EXPECT_EQ(v.seal_exit_code, 13);
  EXPECT_EQ(v.failure_summary,
            "seal: Error (exit 13): Unavailable: drive: call 1 answered HTTP 500");
}

TEST(Views, PodUnschedulable) {
  PodView v = PodViewFromJson(Json::parse(R"({
    "metadata": {"name": "p", "labels": {"job-name": "j"},
                 "creationTimestamp": "2026-12-02T10:00:00Z"},
    "status": {"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
       "lastTransitionTime": "2026-12-02T10:00:05Z",
       "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}})"));
  ASSERT_TRUE(v.unschedulable_since.has_value());
  EXPECT_EQ(api::FormatTime(*v.unschedulable_since), "2026-12-02T10:00:05Z");
  EXPECT_EQ(v.unschedulable_message, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.");
  // Scheduled, or not yet looked at: not unschedulable.
  for (const char* status :
       {R"({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]})",
        R"({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
               "reason": "SchedulingGated"}]})",
        R"({"phase": "Pending"})", R"({"phase": "Pending", "conditions": "hostile"})"}) {
    PodView w =
        PodViewFromJson(Json{{"metadata", {{"name", "p"}}}, {"status", Json::parse(status)}});
    EXPECT_FALSE(w.unschedulable_since.has_value()) << status;
  }
  // No lastTransitionTime: since creation.
  PodView n = PodViewFromJson(Json::parse(R"({
    "metadata": {"name": "p", "creationTimestamp": "2026-12-02T10:00:00Z"},
    "status": {"conditions": [{"type": "PodScheduled", "status": "False",
                               "reason": "Unschedulable"}]}})"));
  ASSERT_TRUE(n.unschedulable_since.has_value());
  EXPECT_EQ(api::FormatTime(*n.unschedulable_since), "2026-12-02T10:00:00Z");
}

TEST(Views, Pvc) {
  PvcView v = PvcViewFromJson(Json::parse(R"({
    "metadata": {"name": "c", "uid": "pu", "ownerReferences": [{"uid": "kc-uid"}]},
    "spec": {"accessModes": ["ReadWriteOnce"]},
    "status": {"phase": "Pending"}})"),
                              "kc-uid");
  EXPECT_TRUE(v.owned_by_us);
  EXPECT_EQ(v.phase, "Pending");
  EXPECT_EQ(v.access_modes, std::vector<std::string>{"ReadWriteOnce"});
  EXPECT_FALSE(
      PvcViewFromJson(Json::parse(R"({"metadata": {"name": "c"}})"), "kc-uid").owned_by_us);
}

// An update queues a pass only when the view changes: the table applies each
// edit to a running warmup Job / Pod and says whether Decide would see it.
TEST(Views, JobAndPodChangesThatMatter) {
  const Json job = Json::parse(R"({
    "metadata": {"name": "j", "resourceVersion": "7", "labels": {"kernelcache.io/name": "llama"}},
    "status": {"active": 1, "ready": 0, "conditions": []}})");
  const Json pod = Json::parse(R"({
    "metadata": {"name": "p", "resourceVersion": "9", "labels": {"job-name": "j"}},
    "spec": {"nodeName": "gpu-07"},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
               "containerStatuses": [{"name": "seal", "ready": false,
                                      "state": {"running": {}}}]}})");
  struct Case {
    const char* what;
    bool is_job;
    const char* pointer;  // JSON pointer of the edit
    Json value;
    bool matters;
  };
  const std::vector<Case> cases = {
      {"job: new resourceVersion", true, "/metadata/resourceVersion", "8", false},
      {"job: ready count", true, "/status/ready", 1, false},
      {"job: uncountedTerminatedPods", true, "/status/uncountedTerminatedPods",
       Json{{"succeeded", {"u1"}}}, false},
      {"job: SuccessCriteriaMet", true, "/status/conditions",
       Json::parse(R"([{"type": "SuccessCriteriaMet", "status": "True"}])"), false},
      {"job: active", true, "/status/active", 0, true},
      {"job: succeeded", true, "/status/succeeded", 1, true},
      {"job: Complete", true, "/status/conditions",
       Json::parse(R"([{"type": "Complete", "status": "True"}])"), true},
      {"job: Failed", true, "/status/conditions",
       Json::parse(R"([{"type": "Failed", "status": "True", "reason": "DeadlineExceeded"}])"),
       true},
      {"job: being deleted", true, "/metadata/deletionTimestamp", "2026-12-04T10:00:00Z", true},
      {"job: relabelled", true, "/metadata/labels/kernelcache.io~1name", "other", true},
      {"pod: new resourceVersion", false, "/metadata/resourceVersion", "10", false},
      {"pod: Ready condition", false, "/status/conditions",
       Json::parse(R"([{"type": "Ready", "status": "True"}])"), false},
      {"pod: container ready", false, "/status/containerStatuses/0/ready", true, false},
      {"pod: podIP", false, "/status/podIP", "10.0.0.7", false},
      {"pod: phase", false, "/status/phase", "Succeeded", true},
      {"pod: node", false, "/spec/nodeName", "gpu-08", true},
      {"pod: seal terminated", false, "/status/containerStatuses/0/state",
       Json::parse(R"({"terminated": {"exitCode": 0, "message": "{}"}})"), true},
      {"pod: unschedulable", false, "/status/conditions",
       Json::parse(R"([{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}])"),
       true},
  };
  for (const Case& c : cases) {
    const Json& before = c.is_job ? job : pod;
    Json after = before;
    after[Json::json_pointer(c.pointer)] = c.value;
    const bool got = c.is_job ? JobChangeMatters(before, after) : PodChangeMatters(before, after);
    EXPECT_EQ(got, c.matters) << c.what;
  }
  EXPECT_FALSE(JobChangeMatters(job, job));
  EXPECT_FALSE(PodChangeMatters(pod, pod));
}

}  // namespace
}  // namespace kc::op
