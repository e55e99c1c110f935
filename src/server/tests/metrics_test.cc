#include "server/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/handler.h"
#include "store/sqlite_store.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

api::Json Job(const std::string& uid, const std::string& state) {
  api::Json job = {{"kind", "TFJob"},
                   {"metadata", {{"name", "j"}, {"namespace", "team"}, {"uid", uid}}}};
  if (!state.empty()) job["status"] = {{"conditions", {{{"type", state}, {"status", "True"}}}}};
  return job;
}

TEST(MetricsTest, CountsJobsAsUpstreamAndRequestsByVerbAndCode) {
  FakeClock clock;
  auto store = *store::SqliteStore::Open({.clock = &clock});
  Metrics metrics;
  metrics.ObserveChange({store::EventType::kAdded, 1, Job("a", "")});
  metrics.ObserveChange({store::EventType::kModified, 2, Job("a", "Running")});
  metrics.ObserveChange({store::EventType::kModified, 3, Job("a", "Restarting")});
  metrics.ObserveChange({store::EventType::kModified, 4, Job("a", "Restarting")});  // no change
  metrics.ObserveChange({store::EventType::kModified, 5, Job("a", "Succeeded")});
  metrics.ObserveChange({store::EventType::kDeleted, 6, Job("a", "Succeeded")});
  metrics.ObserveReconcile(0.002);
  metrics.ObserveRequest({.method = "GET", .path = "/apis/kubeflow.org/v1/namespaces/team/tfjobs"},
                         200, 0.0007);
  std::string text = metrics.Render(*store);
  for (const char* line :
       {"training_operator_jobs_created_total{framework=\"tensorflow\",job_namespace=\"team\"} 1\n",
        "training_operator_jobs_restarted_total{framework=\"tensorflow\",job_namespace=\"team\"} "
        "1\n",
        "training_operator_jobs_successful_total{framework=\"tensorflow\",job_namespace=\"team\"} "
        "1\n",
        "training_operator_jobs_deleted_total{framework=\"tensorflow\",job_namespace=\"team\"} 1\n",
        "# TYPE training_operator_jobs_failed_total counter\n", "trainyard_running_replicas 0\n",
        "trainyard_queue_depth 0\n",
        "trainyard_reconcile_duration_seconds_bucket{le=\"0.0025\"} 1\n",
        "trainyard_reconcile_duration_seconds_bucket{le=\"0.001\"} 0\n",
        "trainyard_reconcile_duration_seconds_count 1\n",
        "trainyard_apiserver_request_total{code=\"200\",resource=\"tfjobs\",verb=\"LIST\"} 1\n",
        "trainyard_apiserver_request_duration_seconds_bucket{resource=\"tfjobs\",verb=\"LIST\",le="
        "\"0.001\"} 1\n"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

}  // namespace
}  // namespace trainyard::server
