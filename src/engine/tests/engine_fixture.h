// A whole engine in a fresh directory, with real processes, for tests that
// run jobs through it: submit YAML, run the loop until something holds (or
// fail after 30 s), read jobs and replica logs.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "api/tests/test_util.h"
#include "common/tests/test_dir.h"
#include "controller/conditions.h"
#include "engine/engine.h"

namespace trainyard::engine::testing {

class EngineFixture : public ::testing::Test {
 protected:
  // `machine`: what the engine may use; discovered when not given.
  // `store_vfs`: the store's SQLite VFS, for tests that inject faults.
  void StartEngine(const std::string& prefix,
                   std::optional<runtime::MachineFacts> machine = std::nullopt,
                   const std::string& store_vfs = "") {
    dir_ = FreshTestDir(prefix);
    auto engine = Engine::Create({.state_dir = (dir_ / "state").string(),
                                  .working_dir = dir_.string(),
                                  .base_env = {{"PATH", "/usr/bin:/bin"}},
                                  .machine = machine,
                                  .store_vfs = store_vfs});
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(*engine);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }

  store::ObjectKey Submit(const std::string& yaml) {
    return *engine_->Submit(api::testing::ValidObject(yaml));
  }
  api::TrainingJob Job(const store::ObjectKey& key) {
    return std::get<api::TrainingJob>(*api::DecodeObject(*engine_->store().Get(key)).object);
  }
  bool Finished(const store::ObjectKey& key) {
    return controller::IsFinished(Job(key).status.conditions);
  }
  // Runs the loop until `done`, failing after 30 s.
  void RunUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool timed_out = false;
    Status s = engine_->Run(
        [&] {
          timed_out = std::chrono::steady_clock::now() > deadline;
          return done() || timed_out;
        },
        [] {});
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_FALSE(timed_out);
  }
  std::string Log(const std::string& pod, const std::string& container) {
    std::ifstream in(engine_->node()->LogPath("default", pod, container));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace trainyard::engine::testing
