// Jobs the server suites share: one that restarts and counts, one that
// sleeps, and how their logs are compared.
#pragma once

#include <cstdio>
#include <regex>
#include <string>

namespace trainyard::cli::testing {

// A job that fails once (the restart policy restarts it in place) and then
// counts to 20; how it ends and what it logs never depend on timing.
inline constexpr const char* kRestartingJob = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: counter}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'if [ ! -e "$MARK" ]; then echo first run; touch "$MARK"; exit 3; fi; for i in $(seq 1 20); do echo "line $i"; sleep 0.1; done']
              env: [{name: MARK, value: "%s"}]
)";

inline constexpr const char* kSleeper = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: sleeper}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: pytorch, image: none, command: [sleep, "300"]}]
)";

inline std::string Format(const char* pattern, const std::string& arg) {
  char buf[8192];
  std::snprintf(buf, sizeof(buf), pattern, arg.c_str());
  return buf;
}

// Ports differ from run to run; everything else in a log must not.
inline std::string WithoutPorts(const std::string& log) {
  return std::regex_replace(log, std::regex("127\\.0\\.0\\.1:[0-9]+"), "127.0.0.1:PORT");
}

}  // namespace trainyard::cli::testing
