// StdOut metrics read from pod logs through the API, against a fake API:
// every value once, across re-reads and restarts of the reader; a trial
// waits while an ended container's log is unread; the run before a
// restart is read with `previous`; a log that cannot be read is given up.
#include "cluster/pod_log_metrics.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "api/object.h"
#include "api/tests/test_util.h"
#include "store/sqlite_store.h"

namespace trainyard::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The API's pods/log, with the logs the test's pods have printed.
class FakeLogs {
 public:
  // A line as the kubelet stamps it, at second `s` past the hour.
  static std::string Line(int s, const std::string& text) {
    return fmt::format("2026-11-26T07:00:{:02}.000000001Z {}\n", s, text);
  }
  void Print(const std::string& pod, bool previous, const std::string& text) {
    std::lock_guard lock(mu_);
    logs_[Key(pod, previous)] += text;
  }
  void FailWith(Status status) {
    std::lock_guard lock(mu_);
    fail_ = std::move(status);
  }
  // Every read is cut before the answer's end.
  void Cut(bool cut) {
    std::lock_guard lock(mu_);
    cut_ = cut;
  }
  std::vector<PodLogRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Answers with the whole log at once, in small pieces, then ends as a
  // dropped connection would (or as a run that is over does).
  PodLogSource Source() {
    return
        [this](const PodLogRequest& request, const std::function<bool(std::string_view)>& on_data,
               kube::WatchHandle&) -> Result<bool> {
          std::string text;
          bool cut = false;
          {
            std::lock_guard lock(mu_);
            requests_.push_back(request);
            if (!fail_.ok()) return fail_;
            text = logs_[Key(request.pod, request.previous)];
            cut = cut_;
          }
          for (size_t i = 0; i < text.size(); i += 7) {
            if (!on_data(std::string_view(text).substr(i, 7))) return false;
          }
          return !cut;
        };
  }

 private:
  static std::string Key(const std::string& pod, bool previous) {
    return pod + (previous ? "/previous" : "");
  }
  std::mutex mu_;
  std::map<std::string, std::string> logs_;
  std::vector<PodLogRequest> requests_;
  Status fail_;
  bool cut_ = false;
};

class PodLogMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    ASSERT_TRUE(store_
                    ->Create(api::testing::ParseOne(R"(
apiVersion: kubeflow.org/v1beta1
kind: Trial
metadata: {name: t, namespace: default}
spec:
  objective: {type: minimize, objectiveMetricName: loss, additionalMetricNames: [acc]}
  primaryContainerName: main
  runSpec:
    apiVersion: batch/v1
    kind: Job
    spec: {template: {spec: {restartPolicy: Never, containers: [{name: main, image: i}]}}}
)"))
                    .ok());
    api::Json job = {{"apiVersion", "batch/v1"},
                     {"kind", "Job"},
                     {"metadata", {{"name", "t"}, {"namespace", "default"}}}};
    job_uid_ = (*store_->Create(job))["metadata"]["uid"];
    api::Json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", "t-0"},
          {"namespace", "default"},
          {"labels", {{"katib.kubeflow.org/trial", "t"}}},
          {"ownerReferences",
           {{{"kind", "Job"}, {"name", "t"}, {"uid", job_uid_}, {"controller", true}}}}}},
        {"spec", {{"nodeName", "node-a"}}}};
    ASSERT_TRUE(store_->Create(pod).ok());
    Restart();
  }

  // A fresh reader, as after the operator restarted.
  void Restart() {
    metrics_.reset();
    metrics_ = std::make_unique<PodLogMetrics>(PodLogMetricsOptions{
        .store = store_.get(), .observations = store_.get(), .source = logs_.Source()});
  }
  // What the kubelet reports of the container: its state, and the id of
  // the run that ended last (none: "").
  void SetContainer(const std::string& state, int restarts = 0, const std::string& last = "") {
    api::Json pod = *store_->Get({"Pod", "default", "t-0"});
    api::Json status = {
        {"name", "main"}, {"restartCount", restarts}, {"state", {{state, api::Json::object()}}}};
    if (state != "waiting") status["containerID"] = fmt::format("c{}", restarts);
    if (!last.empty()) status["lastState"] = {{"terminated", {{"containerID", last}}}};
    pod["status"] = {{"phase", state == "terminated" ? "Succeeded" : "Running"},
                     {"containerStatuses", {status}}};
    ASSERT_TRUE(store_->UpdateStatus(pod).ok());
  }
  api::Trial Trial() {
    return std::get<api::Trial>(*api::DecodeObject(*store_->Get({"Trial", "default", "t"})).object);
  }
  // Collects until the trial has nothing left to wait for (or a deadline).
  bool Settled(bool job_finished = false) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      Result<controller::OutputRead> read = metrics_->Collect(Trial(), job_finished);
      EXPECT_TRUE(read.ok()) << read.status().ToString();
      if (read.ok() && !read->reading) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  std::vector<std::string> Values() {
    std::vector<std::string> out;
    std::vector<store::ObservationRow> rows = *store_->ListObservations("default/t");
    for (const store::ObservationRow& row : rows) {
      out.push_back(row.metric + "=" + row.value);
    }
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::string job_uid_;
  FakeLogs logs_;
  std::unique_ptr<PodLogMetrics> metrics_;
};

TEST_F(PodLogMetricsTest, EveryValueOnceAndTheTrialWaitsForTheEnd) {
  logs_.Print("t-0", false,
              FakeLogs::Line(1, "epoch 1 loss=0.5 acc=0.7") + FakeLogs::Line(2, "no metric here"));
  ASSERT_TRUE(Settled());  // not started: nothing to wait for
  EXPECT_TRUE(logs_.requests().empty());
  SetContainer("running");
  // Read while it runs (the fake ends each read: read again, nothing twice).
  for (int i = 0; i < 50 && Values().size() < 2; ++i) {
    ASSERT_TRUE(Settled());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(Values(), ElementsAre("loss=0.5", "acc=0.7"));
  logs_.Print("t-0", false,
              FakeLogs::Line(3, "epoch 2 loss=0.25") + "2026-11-26T07:00:04Z tail loss=0.125");
  SetContainer("terminated");
  // Ended and unread: the trial waits.
  Result<controller::OutputRead> read = metrics_->Collect(Trial());
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->reading);
  ASSERT_TRUE(Settled());
  // The last line without its newline counts once the run is over.
  EXPECT_THAT(Values(), ElementsAre("loss=0.5", "acc=0.7", "loss=0.25", "loss=0.125"));
  size_t asked = logs_.requests().size();
  ASSERT_TRUE(Settled());
  EXPECT_EQ(logs_.requests().size(), asked) << "a log read to its end is not read again";
  // The kubelet's time is a sample's time.
  std::vector<store::ObservationRow> rows = *store_->ListObservations("default/t");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].time_us, *tune::ParseRfc3339Micros("2026-11-26T07:00:03Z"));
}

TEST_F(PodLogMetricsTest, ARestartedReaderResumesWhereItWas) {
  SetContainer("running");
  logs_.Print("t-0", false, FakeLogs::Line(1, "loss=0.5"));
  for (int i = 0; i < 200 && Values().empty(); ++i) {
    ASSERT_TRUE(Settled());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_THAT(Values(), ElementsAre("loss=0.5"));
  Restart();
  logs_.Print("t-0", false, "2026-11-26T07:00:01.5Z loss=0.4\n" + FakeLogs::Line(2, "loss=0.3"));
  SetContainer("terminated");
  ASSERT_TRUE(Settled());
  // The log is asked for again from that second on: the line read before
  // the restart is skipped, the one stamped later in that second is new.
  EXPECT_THAT(Values(), ElementsAre("loss=0.5", "loss=0.4", "loss=0.3"));
  PodLogRequest last = logs_.requests().back();
  EXPECT_GT(last.since_ns, 0);
  EXPECT_THAT(PodLogPath(last), HasSubstr("&sinceTime=2026-11-26T07:00:01Z"));
}

TEST_F(PodLogMetricsTest, TheRunBeforeARestartIsReadWithPrevious) {
  logs_.Print("t-0", true, FakeLogs::Line(1, "loss=0.9"));
  logs_.Print("t-0", false, FakeLogs::Line(5, "loss=0.2"));
  SetContainer("terminated", /*restarts=*/1, /*last=*/"c0");
  ASSERT_TRUE(Settled());
  EXPECT_THAT(Values(), ::testing::UnorderedElementsAre("loss=0.9", "loss=0.2"));
  bool asked_previous = false;
  for (const PodLogRequest& r : logs_.requests()) asked_previous = asked_previous || r.previous;
  EXPECT_TRUE(asked_previous);
}

// While a container waits to restart, restartCount still counts the run
// that ended: that run is read once, and not again once the next runs.
TEST_F(PodLogMetricsTest, ARunWaitingToRestartIsReadOnce) {
  logs_.Print("t-0", true, FakeLogs::Line(1, "loss=0.9"));
  SetContainer("waiting", 0, /*last=*/"c0");
  ASSERT_TRUE(Settled());
  EXPECT_THAT(Values(), ElementsAre("loss=0.9"));
  logs_.Print("t-0", false, FakeLogs::Line(5, "loss=0.2"));
  SetContainer("terminated", 1, /*last=*/"c0");
  ASSERT_TRUE(Settled());
  EXPECT_THAT(Values(), ElementsAre("loss=0.9", "loss=0.2"));
}

TEST_F(PodLogMetricsTest, OnlyAReadToTheEndEndsAnEndedRunsLog) {
  logs_.Print("t-0", false, FakeLogs::Line(1, "loss=0.5"));
  SetContainer("terminated");
  logs_.Cut(true);
  for (int i = 0; i < 20; ++i) {
    Result<controller::OutputRead> read = metrics_->Collect(Trial());
    ASSERT_TRUE(read.ok());
    EXPECT_TRUE(read->reading) << "a cut read is no end";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  logs_.Cut(false);
  ASSERT_TRUE(Settled());
  EXPECT_THAT(Values(), ElementsAre("loss=0.5"));
}

TEST_F(PodLogMetricsTest, AFinishedJobsPodsHaveEndedWhateverTheirCacheSays) {
  SetContainer("running");
  Result<controller::OutputRead> read = metrics_->Collect(Trial(), /*job_finished=*/true);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->reading);
  ASSERT_TRUE(Settled(/*job_finished=*/true));
}

// The runtime stamps stdout and stderr lines apart: a line stamped before
// the one read just before it is still new.
TEST_F(PodLogMetricsTest, ALineStampedBeforeThePreviousOneStillCounts) {
  logs_.Print("t-0", false, FakeLogs::Line(2, "loss=0.5") + FakeLogs::Line(1, "acc=0.9"));
  SetContainer("terminated");
  ASSERT_TRUE(Settled());
  EXPECT_THAT(Values(), ElementsAre("loss=0.5", "acc=0.9"));
}

TEST_F(PodLogMetricsTest, AnUnreadableLogOfAnEndedRunIsGivenUpSayingWhy) {
  logs_.FailWith(UnavailableError("the node is gone"));
  SetContainer("terminated");
  ASSERT_TRUE(Settled());
  EXPECT_GE(logs_.requests().size(), 5u);
  EXPECT_TRUE(Values().empty());
  Result<controller::OutputRead> read = metrics_->Collect(Trial());
  ASSERT_TRUE(read.ok());
  EXPECT_THAT(read->unread, ::testing::HasSubstr("the node is gone"));
}

// A pod that was never on a node has no log (kube-apiserver answers 204):
// it is waited for, then given up, and the reason said.
TEST_F(PodLogMetricsTest, APodNeverScheduledIsWaitedForThenSaidToHaveNoLog) {
  api::Json pod = *store_->Get({"Pod", "default", "t-0"});
  pod["spec"].erase("nodeName");
  ASSERT_TRUE(store_->Update(pod).ok());
  logs_.FailWith(FailedPreconditionError("204 No Content: nothing to read there yet"));
  SetContainer("terminated");
  Result<controller::OutputRead> first = metrics_->Collect(Trial());
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->reading) << "waited for, not taken for an empty log";
  ASSERT_TRUE(Settled());
  Result<controller::OutputRead> read = metrics_->Collect(Trial());
  ASSERT_TRUE(read.ok());
  EXPECT_THAT(read->unread, ::testing::HasSubstr("never scheduled to a node"));
}

TEST_F(PodLogMetricsTest, AHugeLineIsSkippedAndTheNextRead) {
  SetContainer("terminated");
  logs_.Print(
      "t-0", false,
      FakeLogs::Line(1, std::string(2 << 20, 'x') + " loss=9") + FakeLogs::Line(2, "loss=1"));
  ASSERT_TRUE(Settled());
  EXPECT_THAT(Values(), ElementsAre("loss=1"));
}

TEST_F(PodLogMetricsTest, OnlyStdOutTrialsAreRead) {
  api::Json trial = *store_->Get({"Trial", "default", "t"});
  trial["spec"]["metricsCollector"] = {{"collector", {{"kind", "Push"}}}};
  ASSERT_TRUE(store_->Update(trial).ok());
  SetContainer("terminated");
  ASSERT_TRUE(Settled());
  EXPECT_TRUE(logs_.requests().empty());
}

TEST(PodLogPathTest, AsksForTimestampsAndFollowsTheCurrentRun) {
  EXPECT_EQ(PodLogPath({.namespace_ = "ns", .pod = "p", .container = "c"}),
            "/api/v1/namespaces/ns/pods/p/log?container=c&timestamps=true&follow=true");
  EXPECT_EQ(PodLogPath({.namespace_ = "ns", .pod = "p", .container = "c", .previous = true}),
            "/api/v1/namespaces/ns/pods/p/log?container=c&timestamps=true&previous=true");
}

}  // namespace
}  // namespace trainyard::cluster
