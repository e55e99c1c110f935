// Whole jobs through the embedded control plane, with real processes: sh
// scripts stand in for training programs and print what they were given.
#include "engine/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/tests/engine_fixture.h"
#include "store/sqlite_file_reader.h"
#include "store/sqlite_store.h"
#include "store/tests/full_disk_vfs.h"

namespace trainyard::engine {
namespace {

namespace fs = std::filesystem;

class EngineTest : public testing::EngineFixture {
 protected:
  void SetUp() override { StartEngine("trainyard-engine-test"); }
  void RunToEnd(const store::ObjectKey& key) {
    RunUntil([&] { return Finished(key); });
  }
};

TEST_F(EngineTest, APyTorchJobRunsWithTheContractAndSucceeds) {
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: env}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'echo "$MASTER_ADDR:$MASTER_PORT rank=$RANK world=$WORLD_SIZE"']
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'echo "$MASTER_ADDR:$MASTER_PORT rank=$RANK world=$WORLD_SIZE"']
)");
  RunToEnd(key);
  api::TrainingJob job = Job(key);
  EXPECT_EQ(job.status.conditions.back().type, "Succeeded");
  std::string master = Log("env-master-0", "pytorch");
  EXPECT_THAT(master, ::testing::MatchesRegex("127\\.0\\.0\\.1:[0-9]+ rank=0 world=3\n"));
  std::string port = master.substr(10, master.find(' ') - 10);
  EXPECT_EQ(Log("env-worker-1", "pytorch"), "127.0.0.1:" + port + " rank=2 world=3\n");
  EXPECT_EQ(engine_->node()->running(), 0u);
}

TEST_F(EngineTest, AFailedReplicaFailsTheJobAndNothingKeepsRunning) {
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: fail}
spec:
  xgbReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - {name: xgboost, image: none, command: [sh, -c, 'echo $$$$ > master.pid; exec sleep 1000']}
    Worker:
      restartPolicy: Never
      template:
        spec:
          containers: [{name: xgboost, image: none, command: [sh, -c, 'exit 7']}]
)");
  RunToEnd(key);
  api::TrainingJob job = Job(key);
  EXPECT_EQ(job.status.conditions.back().type, "Failed");
  EXPECT_EQ(job.status.conditions.back().message,
            "XGBoostJob fail is failed because 1 Worker replica(s) failed (last failure: pod "
            "fail-worker-0, container xgboost, exit code 7, Error).");
  // The master was stopped with the job (its pod kept, cleanPodPolicy
  // None); let the loop see it go.
  ASSERT_TRUE(engine_->Run([&] { return engine_->node()->running() == 0; }, [] {}).ok());
  pid_t pid = 0;
  std::ifstream(dir_ / "master.pid") >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_NE(kill(pid, 0), 0);
}

// Steps share one transaction while they follow each other at once; Run
// commits it before it shows anything. So whenever on_step runs, the store
// file (which `trainyard exec` reads from another process) already holds
// what memory holds.
TEST_F(EngineTest, WhatAStepShowsIsAlreadyOnDisk) {
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: durable}
spec:
  jaxReplicaSpecs:
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: jax, image: none, command: [sleep, "1000"]}]}}
)");
  std::string db = (dir_ / "state" / "state.db").string();
  int checked = 0;
  Status s = engine_->Run([&] { return engine_->node()->running() == 2; },
                          [&] {
                            for (const store::ObjectKey& k :
                                 {key, store::ObjectKey{"Pod", "default", "durable-worker-0"},
                                  store::ObjectKey{"Pod", "default", "durable-worker-1"}}) {
                              Result<api::Json> in_memory = engine_->store().Get(k);
                              if (!in_memory.ok()) continue;
                              EXPECT_EQ(*store::SqliteFileReader(db).Get(k), *in_memory)
                                  << k.ToString();
                              ++checked;
                            }
                          });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(checked, 3);  // the job and both pods, Running
  engine_->StopAll();
}

// A pod whose recreation count is not a number (a shape the controller
// never writes) makes its job's reconcile throw: that job is said to be
// left alone, once, and the loop goes on.
TEST_F(EngineTest, AReconcileThatThrowsLeavesItsObjectAloneAndTheLoopOn) {
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: odd}
spec:
  jaxReplicaSpecs:
    Worker:
      restartPolicy: ExitCode
      template:
        spec:
          containers:
            - {name: jax, image: none, command: [sh, -c, 'while [ ! -e go ]; do sleep 0.05; done; kill -9 $$$$']}
)");
  RunUntil([&] { return engine_->node()->running() == 1; });
  store::ObjectKey pod_key{"Pod", "default", "odd-worker-0"};
  Result<api::Json> pod = engine_->store().Get(pod_key);
  ASSERT_TRUE(pod.ok());
  (*pod)["metadata"]["annotations"]["trainyard.dev/recreations"] = "lots";
  ASSERT_TRUE(engine_->store().Update(*pod).ok());
  std::ofstream(dir_ / "go").close();
  ::testing::internal::CaptureStderr();
  // Killed by a signal under ExitCode: the job would recreate the pod,
  // counting from the annotation.
  int steps_after = 0;
  RunUntil([&] {
    Result<api::Json> now = engine_->store().Get(pod_key);
    bool failed = now.ok() && api::StringAt((*now)["status"], "phase") == "Failed";
    return failed && ++steps_after > 5;
  });
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, ::testing::HasSubstr("trainyard: JAXJob default/odd: cannot reconcile it ("));
  EXPECT_NE(said.find("left alone until it changes"), std::string::npos) << said;
  EXPECT_EQ(said.find("left alone until it changes"), said.rfind("left alone until it changes"))
      << "said more than once: " << said;
  // Every other object is still served: a second job runs to its end.
  store::ObjectKey other = Submit(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: fine}
spec:
  jaxReplicaSpecs:
    Worker:
      template: {spec: {containers: [{name: jax, image: none, command: ["true"]}]}}
)");
  RunToEnd(other);
  EXPECT_EQ(Job(other).status.conditions.back().type, "Succeeded");
  EXPECT_FALSE(Finished(key)) << "the odd job was acted on after all";
}

TEST_F(EngineTest, RequestStopEndsTheLoop) {
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: forever}
spec:
  jaxReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: jax, image: none, command: [sleep, "1000"]}]}}}
)");
  int steps = 0;
  Status s = engine_->Run([] { return false; },
                          [&] {
                            if (++steps == 3) engine_->RequestStop();
                          });
  EXPECT_EQ(s.code(), StatusCode::kAborted);
  EXPECT_EQ(engine_->node()->running(), 1u);
  engine_->StopAll();
  EXPECT_EQ(engine_->node()->running(), 0u);
}

TEST_F(EngineTest, ExecuteWritesFromAnotherThreadAndAnswersOnceDurable) {
  std::string db = (dir_ / "state" / "state.db").string();
  Result<api::Json> written = UnavailableError("not run");
  Result<api::Json> thrown = UnavailableError("not run");
  std::optional<Result<api::Json>> committed;
  std::thread client([&] {
    // Made before or after Run() starts on the main thread: it waits for it.
    written = engine_->Execute([](store::ObjectStore& store) {
      return store.Create({{"apiVersion", "v1"},
                           {"kind", "ConfigMap"},
                           {"metadata", {{"name", "c"}, {"namespace", "default"}}}});
    });
    thrown = engine_->Execute([](store::ObjectStore&) -> Result<api::Json> {
      return api::Json(1).at("missing");  // throws
    });
    // Acknowledged means committed: another reader of the file sees it.
    committed = store::SqliteFileReader(db).Get({"ConfigMap", "default", "c"});
    engine_->RequestStop();
  });
  Status s = engine_->Run([] { return false; }, [] {});
  client.join();
  EXPECT_EQ(s.code(), StatusCode::kAborted);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ((*written)["metadata"]["name"], "c");
  ASSERT_TRUE(committed && committed->ok());
  EXPECT_EQ((**committed)["metadata"]["uid"], (*written)["metadata"]["uid"]);
  // A write that throws (a client's object surprising a JSON accessor)
  // is that call's error; the loop goes on (checked above: it stopped
  // only when asked).
  EXPECT_EQ(thrown.status().code(), StatusCode::kInvalidArgument);
  // Once Run() has stopped, a call is refused rather than left waiting.
  EXPECT_EQ(engine_->Execute([](store::ObjectStore&) { return Result<api::Json>(api::Json()); })
                .status()
                .code(),
            StatusCode::kUnavailable);
}

// The engine runs on whatever store it is given (store::GroupCommitStore):
// here one in memory, so nothing reaches a state.db.
TEST(EngineStoreTest, TheEngineWritesToTheStoreItIsGiven) {
  std::filesystem::path dir = FreshTestDir("trainyard-engine-store");
  store::GroupCommitStore* given = nullptr;
  auto engine = Engine::Create(
      {.state_dir = (dir / "state").string(),
       .working_dir = dir.string(),
       .open_store = [&](const std::string&) -> Result<std::unique_ptr<store::GroupCommitStore>> {
         ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteStore> memory, store::SqliteStore::Open({}));
         given = memory.get();
         return std::unique_ptr<store::GroupCommitStore>(std::move(memory));
       },
       .api_only = true});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_EQ(&(*engine)->store(), given);
  Result<api::Json> written = UnavailableError("not run");
  std::thread client([&] {
    written = (*engine)->Execute([](store::ObjectStore& store) {
      return store.Create({{"apiVersion", "v1"},
                           {"kind", "ConfigMap"},
                           {"metadata", {{"name", "c"}, {"namespace", "default"}}}});
    });
    (*engine)->RequestStop();
  });
  (void)(*engine)->Run([] { return false; }, [] {});
  client.join();
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_TRUE(given->committed().Get({"ConfigMap", "default", "c"}).ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "state" / "state.db"));
  engine->reset();
  std::filesystem::remove_all(dir);
}

// A SIGTERM under load: the loop stops between reconciles, not only once
// the queue is empty.
TEST(EngineStopTest, RequestStopEndsABusyLoopBetweenReconciles) {
  std::filesystem::path dir = FreshTestDir("trainyard-engine-stop");
  Engine* engine_ptr = nullptr;
  int reconciles = 0;
  auto engine = Engine::Create({.state_dir = (dir / "state").string(),
                                .working_dir = dir.string(),
                                .base_env = {{"PATH", "/usr/bin:/bin"}},
                                .on_reconcile = [&](auto) {
                                  if (++reconciles == 3) engine_ptr->RequestStop();
                                }});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  engine_ptr = engine->get();
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE((*engine)
                    ->Submit(api::testing::ValidObject(
                        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j" + std::to_string(i) +
                        "}\nspec:\n  suspend: true\n  template:\n    spec:\n      "
                        "restartPolicy: Never\n      containers: [{name: m, image: i, command: "
                        "[sleep, '1']}]\n"))
                    .ok());
  }
  Status s = (*engine)->Run([] { return false; }, [] {});
  EXPECT_EQ(s.code(), StatusCode::kAborted);
  EXPECT_LT(reconciles, 30);
  engine->reset();
  std::filesystem::remove_all(dir);
}

class EngineFullDiskTest : public testing::EngineFixture {
 protected:
  void SetUp() override {
    StartEngine("trainyard-engine-full-disk", std::nullopt, store::testing::FullDiskVfs::Name());
  }
  void TearDown() override {
    store::testing::FullDiskVfs::SetFull(false);
    EngineFixture::TearDown();
  }
  // Polls the store (thread-safe) until the pod runs, for 30 s at most.
  bool PodRuns(const std::string& name) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      Result<api::Json> pod = engine_->store().Get({"Pod", "default", name});
      if (pod.ok() && pod->value("status", api::Json::object()).value("phase", "") == "Running") {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

Engine::Write CreateConfigMap(const std::string& name) {
  return [name](store::ObjectStore& store) {
    return store.Create({{"apiVersion", "v1"},
                         {"kind", "ConfigMap"},
                         {"metadata", {{"name", name}, {"namespace", "default"}}}});
  };
}

// As kube-apiserver over a full etcd: writes get a 500 that says why, and
// everything else goes on (reads, the loop, the replicas) until there is
// room again.
TEST_F(EngineFullDiskTest, WritesAreRefusedWhileTheDiskIsFullAndTheLoopAndReplicasGoOn) {
  fs::path go = dir_ / "go";
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: waiter}
spec:
  jaxReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - {name: jax, image: none, command: [sh, -c, 'while [ ! -e )" +
                                go.string() + R"( ]; do sleep 0.05; done']}
)");
  std::vector<Result<api::Json>> refused;
  Result<api::Json> accepted = UnavailableError("not run");
  std::thread client([&] {
    if (!PodRuns("waiter-worker-0")) return;
    store::testing::FullDiskVfs::SetFull(true);
    refused.push_back(engine_->Execute(CreateConfigMap("refused")));
    refused.push_back(engine_->Execute(CreateConfigMap("refused")));  // the loop still answers
    store::testing::FullDiskVfs::SetFull(false);
    accepted = engine_->Execute(CreateConfigMap("accepted"));
    std::ofstream(go).put('\n');  // the replica ran on: it ends now, and its job with it
  });
  RunUntil([&] { return Finished(key); });
  client.join();
  ASSERT_EQ(refused.size(), 2u);
  for (const Result<api::Json>& r : refused) {
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    EXPECT_THAT(r.status().message(),
                ::testing::StartsWith("the disk is full: nothing was written"));
  }
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(engine_->store().Get({"ConfigMap", "default", "refused"}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Job(key).status.conditions.back().type, "Succeeded");
}

}  // namespace
}  // namespace trainyard::engine

namespace trainyard::engine {
namespace {

// The garbage collector: what names a deleted owner goes, by uid, both when
// the owner is deleted while the engine runs and when it was deleted just
// before a crash (the engine finds the dependents whose owner is gone at
// start).
TEST(EngineGarbageTest, DependentsOfADeletedOwnerGoNowAndAfterARestart) {
  std::filesystem::path dir = FreshTestDir("trainyard-engine-gc");
  auto open = [&] {
    return Engine::Create({.state_dir = (dir / "state").string(),
                           .working_dir = dir.string(),
                           .base_env = {{"PATH", "/usr/bin:/bin"}}});
  };
  auto run_until = [](Engine& engine, const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    Status s =
        engine.Run([&] { return done() || std::chrono::steady_clock::now() > deadline; }, [] {});
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(done());
  };
  auto dependent = [](const std::string& name, const std::string& owner_uid) {
    return api::Json{{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata",
                      {{"name", name},
                       {"namespace", "default"},
                       {"ownerReferences",
                        {{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"name", "owner"},
                          {"uid", owner_uid},
                          {"controller", true}}}}}}};
  };
  {
    auto engine = open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    store::GroupCommitStore& store = (*engine)->store();
    api::Json owner = {{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata", {{"name", "owner"}, {"namespace", "default"}}}};
    std::string uid = (*store.Create(owner))["metadata"]["uid"];
    ASSERT_TRUE(store.Create(dependent("child", uid)).ok());
    ASSERT_TRUE(store
                    .Create(dependent("grandchild", (*store.Get({"ConfigMap", "default",
                                                                 "child"}))["metadata"]["uid"]))
                    .ok());
    ASSERT_TRUE(store.Delete({"ConfigMap", "default", "owner"}).ok());
    run_until(**engine, [&] { return store.List("ConfigMap", "default")->items.empty(); });
    // As if the engine crashed right after an owner was deleted.
    ASSERT_TRUE(store.Create(dependent("orphan", "uid-of-an-owner-gone")).ok());
  }
  auto engine = open();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  run_until(**engine,
            [&] { return (*engine)->store().List("ConfigMap", "default")->items.empty(); });
  engine->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::engine
