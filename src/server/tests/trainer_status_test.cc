// A TrainJob's trainer reporting its progress (KEP-2779): upstream's
// request, byte for byte, checked as the CRD checks it, stored in place of
// the last report, with upstream's answers; the TrainJob's uid as its
// token where tokens are required; a few reports a second at most.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/auth.h"
#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

constexpr const char* kStatus =
    "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/tj/status";

// KEP-2779's example request, as the SDK sends it.
constexpr const char* kReport =
    R"({"trainerStatus": {"progressPercentage": 42, "estimatedRemainingSeconds": 120,
    "metrics": [{"name": "loss", "value": "0.123"}, {"name": "accuracy", "value": "0.95"}],
    "lastUpdatedTime": "2026-01-23T10:30:45Z"}})";

class TrainerStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api::Json job = {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                     {"kind", "TrainJob"},
                     {"metadata", {{"name", "tj"}, {"namespace", "default"}}},
                     {"spec", {{"runtimeRef", {{"name", "torch-distributed"}}}}}};
    Result<api::Json> created = backend_.writable().Create(job);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    uid_ = (*created)["metadata"]["uid"];
  }
  ApiResponse Push(const std::string& body, const std::string& token = "",
                   const std::string& path = kStatus) {
    return handler_.Handle({.method = "POST",
                            .path = path,
                            .content_type = "application/json",
                            .authorization = token.empty() ? "" : "Bearer " + token,
                            .body = body});
  }
  api::Json Stored() {
    return (*backend_.store().Get({"TrainJob", "default", "tj"}))["status"]["trainerStatus"];
  }

  FakeClock clock_;
  FakeBackend backend_{clock_};
  Authorizer auth_ = *Authorizer::Parse("ops-secret-123 ops *\n");
  ApiHandler handler_{backend_, clock_, &auth_};
  std::string uid_;
};

TEST_F(TrainerStatusTest, TheTrainersReportIsStoredAndAnsweredBack) {
  ApiResponse r = Push(kReport, uid_);
  ASSERT_EQ(r.code, 200) << r.body;
  api::Json stored = Stored();
  EXPECT_EQ(stored["progressPercentage"], 42);
  EXPECT_EQ(stored["estimatedRemainingSeconds"], 120);
  EXPECT_EQ(stored["metrics"][1]["value"], "0.95");
  EXPECT_EQ(api::Json::parse(r.body)["trainerStatus"], stored);
  // The next report replaces it whole, as upstream's apply does.
  ASSERT_EQ(Push(R"({"trainerStatus": {"progressPercentage": 50,
                     "lastUpdatedTime": "2026-01-23T10:31:00Z"}})",
                 uid_)
                .code,
            200);
  EXPECT_FALSE(Stored().contains("metrics"));
  EXPECT_EQ(Stored()["progressPercentage"], 50);
}

// The status keeps the last report; the job's observation log keeps every
// report's metrics as a series (what early stopping and the charts read).
TEST_F(TrainerStatusTest, EachReportsMetricsAreAPointOfTheJobsSeries) {
  ASSERT_EQ(Push(kReport, uid_).code, 200);
  clock_.Advance(std::chrono::seconds(5));
  ASSERT_EQ(Push(R"({"trainerStatus": {"metrics": [{"name": "loss", "value": "0.1"}],
                     "lastUpdatedTime": "2026-01-23T10:31:00Z"}})",
                 uid_)
                .code,
            200);
  Result<store::ObservationPage> loss = backend_.writable().ListObservations(
      store::JobObservationsId("TrainJob", "default", "tj"), {.metric = "loss"});
  ASSERT_TRUE(loss.ok());
  ASSERT_EQ(loss->rows.size(), 2u);
  EXPECT_EQ(loss->rows[0].value, "0.123");
  EXPECT_EQ(loss->rows[1].value, "0.1");
  EXPECT_LT(loss->rows[0].time_us, loss->rows[1].time_us);
}

// Kubeflow's SDK writes the time with Python's isoformat(): a fraction of
// a second and an offset, kept as metav1.Time keeps it.
TEST_F(TrainerStatusTest, TheSdksTimeIsTakenAndKeptToTheSecondInUtc) {
  ASSERT_EQ(Push(R"({"trainerStatus": {"progressPercentage": 7,
                     "lastUpdatedTime": "2026-01-23T10:30:45.123456+00:00"}})",
                 uid_)
                .code,
            200);
  EXPECT_EQ(Stored()["lastUpdatedTime"], "2026-01-23T10:30:45Z");
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_EQ(Push(R"({"trainerStatus": {"progressPercentage": 8,
                     "lastUpdatedTime": "2026-01-23T12:30:45+02:00"}})",
                 uid_)
                .code,
            200);
  EXPECT_EQ(Stored()["lastUpdatedTime"], "2026-01-23T10:30:45Z");
  EXPECT_EQ(Push(R"({"trainerStatus": {"progressPercentage": 9,
                     "lastUpdatedTime": "2026-01-23 10:30:45"}})",
                 uid_)
                .code,
            422);
}

TEST_F(TrainerStatusTest, WhatTheCrdRefusesIsA422AndChangesNothing) {
  ApiResponse over = Push(R"({"trainerStatus": {"progressPercentage": 101,
                              "lastUpdatedTime": "2026-01-23T10:30:45Z"}})",
                          uid_);
  EXPECT_EQ(over.code, 422);
  EXPECT_THAT(over.body, HasSubstr("status.trainerStatus.progressPercentage"));
  ApiResponse undated = Push(R"({"trainerStatus": {"progressPercentage": 5}})", uid_);
  EXPECT_EQ(undated.code, 422);
  EXPECT_THAT(undated.body, HasSubstr("lastUpdatedTime is required when trainerStatus is present"));
  ApiResponse number = Push(R"({"trainerStatus": {"metrics": [{"name": "loss", "value": 0.5}],
                                "lastUpdatedTime": "2026-01-23T10:30:45Z"}})",
                            uid_);
  EXPECT_EQ(number.code, 422);
  EXPECT_EQ(Push("not json", uid_).code, 422);
  EXPECT_TRUE(Stored().is_null());
  // A report of nothing is answered and leaves the TrainJob as it is.
  EXPECT_EQ(Push("{}", uid_).code, 200);
  EXPECT_TRUE(Stored().is_null());
}

TEST_F(TrainerStatusTest, OnlyTheJobsTokenOrAnAuthorizedOnePushes) {
  EXPECT_EQ(Push(kReport, uid_ + "x").code, 401);
  EXPECT_EQ(Push(kReport).code, 401);
  EXPECT_EQ(Push(kReport, "ops-secret-123").code, 200);
  // Its uid reads nothing, nor pushes another TrainJob's report.
  EXPECT_EQ(handler_
                .Handle({.method = "GET",
                         .path = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/"
                                 "trainjobs/tj",
                         .authorization = "Bearer " + uid_})
                .code,
            401);
  EXPECT_EQ(Push(kReport, "ops-secret-123",
                 "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/gone/status")
                .code,
            404);
}

TEST_F(TrainerStatusTest, ALargeOrTooFrequentReportIsRefused) {
  std::string large =
      std::string(R"({"trainerStatus": {"pad": ")") + std::string(70000, 'x') + R"("}})";
  EXPECT_EQ(Push(large, uid_).code, 413);
  int accepted = 0;
  for (int i = 0; i < 20; ++i) accepted += Push(kReport, uid_).code == 200;
  EXPECT_EQ(accepted, 10);  // the burst, in one instant
  ApiResponse slow = Push(kReport, uid_);
  EXPECT_EQ(slow.code, 429);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(Push(kReport, uid_).code, 200);
}

}  // namespace
}  // namespace trainyard::server
