// `trainyard run` as a user runs it, for the run end-to-end suites: the
// real binary in a fresh folder, its output read back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli::testing {

namespace fs = std::filesystem;

class RunE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-run-e2e"); }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }

  Result<runtime::Process> Start(std::vector<std::string> args,
                                 const std::string& path = "/usr/bin:/bin") {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "run", "--home", (dir_ / "home").string()};
    // The suites' replicas run programs of this machine.
    if (std::find(args.begin(), args.end(), "--root") == args.end()) {
      argv.insert(argv.end(), {"--root", "host"});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return runtime::Process::Start({.argv = argv,
                                    .env = {{"PATH", path}},
                                    .working_dir = dir_.string(),
                                    .log_path = (dir_ / "out").string()});
  }
  int Run(std::vector<std::string> args, const std::string& path = "/usr/bin:/bin") {
    Result<runtime::Process> p = Start(std::move(args), path);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(60));
    EXPECT_TRUE(status.has_value());
    return status ? status->exit_code : -1;
  }
  std::string Output() {
    std::ifstream in(dir_ / "out");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

// The master ends after the workers have written (a job ends with its
// master, and stops workers still running).
inline constexpr const char* kJob = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: hello}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        spec:
          containers:
            - {name: pytorch, image: none, command: [sh, -c, 'until [ -e rank-1 ] && [ -e rank-2 ]; do sleep 0.01; done; echo "master rank $RANK of $WORLD_SIZE"; echo saved > $TRAINYARD_OUTPUT_DIR/model.txt; exit %d']}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {name: pytorch, image: none, command: [sh, -c, 'echo "worker rank $RANK"; touch rank-$RANK']}
)";

inline std::string JobExiting(int code) {
  char buf[1024];
  std::snprintf(buf, sizeof(buf), kJob, code);
  return buf;
}

// A PyTorchJob `name` of one master, whose container `pytorch` has the
// rest of its fields in `container` (YAML at the container's indent).
inline std::string OneMaster(const std::string& name, const std::string& container) {
  return R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: )" +
         name + R"(}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: none)" +
         container + "\n";
}

}  // namespace trainyard::cli::testing
