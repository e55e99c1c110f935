// The metrics collector on its own: what a trial's primary pods print is
// read into its observation log once, whole lines only, from where the
// last read stopped; pods of other jobs are not read.
#include "engine/metrics_collector.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/tests/test_util.h"
#include "common/tests/test_dir.h"
#include "store/sqlite_store.h"
#include "tune/tests/tfevents_encode.h"

namespace trainyard::engine {
namespace {

class MetricsCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("metrics-collector");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    collector_ = std::make_unique<MetricsCollector>(MetricsCollectorOptions{
        .store = store_.get(),
        .log_path =
            [this](const std::string& ns, const std::string& pod, const std::string& container) {
              return (dir_ / (ns + "_" + pod + "_" + container + ".log")).string();
            },
        .clock = &clock_,
        .metrics_dir = (dir_ / "metrics").string()});
    ASSERT_TRUE(store_
                    ->Create(api::testing::ParseOne(R"(
apiVersion: kubeflow.org/v1beta1
kind: Trial
metadata: {name: t, namespace: default}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  primaryContainerName: main
  runSpec:
    apiVersion: batch/v1
    kind: Job
    spec: {template: {spec: {restartPolicy: Never, containers: [{name: main, image: i}]}}}
)"))
                    .ok());
    std::string job_uid = Create("Job", "t", "");
    Create("Pod", "t-0", job_uid);
    // Another job's pod with the trial's label: not the trial's.
    Create("Pod", "impostor-0", Create("Job", "impostor", ""));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Creates an object of `kind` owned by `owner_uid` (if any), labelled
  // as trial t's; its uid.
  std::string Create(const std::string& kind, const std::string& name, const std::string& owner) {
    api::Json object = {{"apiVersion", kind == "Pod" ? "v1" : "batch/v1"},
                        {"kind", kind},
                        {"metadata",
                         {{"name", name},
                          {"namespace", "default"},
                          {"labels", {{"katib.kubeflow.org/trial", "t"}}}}}};
    if (!owner.empty()) {
      object["metadata"]["ownerReferences"] = {
          {{"kind", "Job"}, {"name", "x"}, {"uid", owner}, {"controller", true}}};
    }
    Result<api::Json> created = store_->Create(object);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return (*created)["metadata"]["uid"];
  }

  // PyTorchJob j, its metrics read as `collector` says, by a collector
  // that reads jobs' output folders.
  Result<api::Json> CreateCollectedJob(const std::string& collector) {
    collector_ = std::make_unique<MetricsCollector>(
        MetricsCollectorOptions{.store = store_.get(),
                                .log_path = [](const std::string&, const std::string&,
                                               const std::string&) { return std::string(); },
                                .clock = &clock_,
                                .metrics_dir = (dir_ / "metrics").string(),
                                .artifacts_dir = (dir_ / "artifacts").string()});
    return store_->Create(api::testing::ParseOne(fmt::format(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: j, namespace: default, annotations: {{trainyard.dev/metrics: {}}}}}
spec: {{pytorchReplicaSpecs: {{}}}}
)",
                                                             collector)));
  }

  void Print(const std::string& pod, const std::string& text) {
    std::ofstream(dir_ / ("default_" + pod + "_main.log"), std::ios::app) << text;
  }

  std::vector<std::string> Values() {
    std::vector<std::string> out;
    Result<std::vector<store::ObservationRow>> rows = store_->ListObservations("default/t");
    EXPECT_TRUE(rows.ok());
    for (const store::ObservationRow& row : *rows) {
      out.push_back(row.metric + "=" + row.value);
    }
    return out;
  }

  FakeClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<MetricsCollector> collector_;
};

TEST_F(MetricsCollectorTest, ReadsEachWholeLineOnceFromTheTrialsOwnPods) {
  const store::ObjectKey trial{"Trial", "default", "t"};
  ASSERT_TRUE(collector_->Collect(trial).ok());  // nothing printed yet
  EXPECT_THAT(Values(), ::testing::IsEmpty());

  Print("t-0", "epoch 1\nloss=0.5\nloss=0.4");  // the last line is still being written
  Print("impostor-0", "loss=99\n");
  ASSERT_TRUE(collector_->Collect(trial).ok());
  EXPECT_THAT(Values(), ::testing::ElementsAre("loss=0.5"));
  ASSERT_TRUE(collector_->Collect(trial).ok());  // read again: nothing new
  EXPECT_THAT(Values(), ::testing::ElementsAre("loss=0.5"));

  Print("t-0", "5\nloss=0.3\n");
  ASSERT_TRUE(collector_->Collect(trial).ok());
  EXPECT_THAT(Values(), ::testing::ElementsAre("loss=0.5", "loss=0.45", "loss=0.3"));
  // Where it stopped is durable with the rows: a new collector (a restarted
  // server) does not read them twice.
  MetricsCollector again(
      {.store = store_.get(),
       .log_path = [this](const std::string&, const std::string&,
                          const std::string&) { return (dir_ / "default_t-0_main.log").string(); },
       .clock = &clock_,
       .metrics_dir = (dir_ / "metrics").string()});
  ASSERT_TRUE(again.Collect(trial).ok());
  EXPECT_EQ(Values().size(), 3u);
  EXPECT_TRUE(collector_->Collect({"Trial", "default", "gone"}).ok());
}

// A job's own File collector: its file in its output folder, whole lines
// while it runs, the last line too once it has ended, at most 4 MiB a
// collection (the rest at the next, said to be pending).
TEST_F(MetricsCollectorTest, AJobsFileIsReadInBoundedStepsAndItsLastLineOnceItEnds) {
  Result<api::Json> job = CreateCollectedJob("'File:m.log'");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const store::ObjectKey key{"PyTorchJob", "default", "j"};
  // Whether it is worth collecting again soon; false on an error too.
  auto Polls = [&](const store::ObjectKey& k) {
    Result<bool> more = collector_->CollectJob(k);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    return more.ok() && *more;
  };
  // No folder yet (no replica started): nothing to read, nothing to poll.
  EXPECT_EQ(Polls(key), false);
  std::filesystem::path folder =
      dir_ / "artifacts" / "default" / api::StringAt(*job, {"metadata", "uid"});
  std::filesystem::create_directories(folder);
  // 5 MiB of lines, then one still being written.
  // Long lines, few values: 5 MiB of them stays quick to store.
  const std::string line = "loss=1 " + std::string(1017, '.') + "\n";
  std::string big;
  while (big.size() < (5 << 20)) big += line;
  std::ofstream(folder / "m.log") << big << "loss=2";
  auto values = [&] {
    Result<std::vector<store::ObservationRow>> rows =
        store_->ListObservations(store::JobObservationsId("PyTorchJob", "default", "j"));
    return rows.ok() ? rows->size() : 0u;
  };
  EXPECT_EQ(Polls(key), true);  // 4 MiB read, more left
  size_t first = values();
  EXPECT_LT(first, big.size() / line.size());
  EXPECT_EQ(Polls(key), true);                    // running: read again soon
  EXPECT_EQ(values(), big.size() / line.size());  // whole lines; "loss=2" is being written
  job = store_->Get(key);  // the collector wrote what it read into its status
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["status"]["trainerStatus"]["metrics"][0]["value"], "1");
  (*job)["status"] = {{"conditions", {{{"type", "Succeeded"}, {"status", "True"}}}}};
  ASSERT_TRUE(store_->UpdateStatus(*job).ok());
  EXPECT_EQ(Polls(key), false);  // ended, all read
  EXPECT_EQ(values(), big.size() / line.size() + 1);
  // A line of 64 MiB (a progress bar's carriage returns, binary output)
  // is passed over in one collection, and what follows it read in the next.
  std::ofstream(folder / "m.log", std::ios::app) << std::string(64 << 20, '#') << "\nloss=3\n";
  EXPECT_EQ(Polls(key), true);
  EXPECT_EQ(Polls(key), false);
  EXPECT_EQ(values(), big.size() / line.size() + 2);
}

// A record no read window holds (a 5 MiB graph definition, as Keras'
// TensorBoard callback writes first) is passed over by its length, and
// the scalars after it are read.
TEST_F(MetricsCollectorTest, AnEventRecordLargerThanAReadIsPassedOverNotStuckOn) {
  Result<api::Json> job = CreateCollectedJob("TensorFlowEvent");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::filesystem::path folder =
      dir_ / "artifacts" / "default" / api::StringAt(*job, {"metadata", "uid"});
  std::filesystem::create_directories(folder);
  using namespace tune;  // NOLINT: the encoders
  std::string graph = FrameTfRecord(Key(1, 1) + Raw(1.7e9) + Bytes(4, std::string(5 << 20, 'g')));
  std::ofstream(folder / "events.out.tfevents.1.host")
      << VersionEvent() << graph << Event(1.7e9, 7, {SimpleValue("loss", 0.5f)});
  const store::ObjectKey key{"PyTorchJob", "default", "j"};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(collector_->CollectJob(key).ok());
  Result<std::vector<store::ObservationRow>> rows =
      store_->ListObservations(store::JobObservationsId("PyTorchJob", "default", "j"));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].metric, "loss");
  EXPECT_EQ((*rows)[0].step, 7);
}

}  // namespace
}  // namespace trainyard::engine
