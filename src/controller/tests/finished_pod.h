// A finished batch Job's pod, as many as history leaves in a namespace: for
// the tests and benchmarks that hold a reconcile's cost to its own pods.
#pragma once

#include <string>

#include "api/json.h"

namespace trainyard::controller::testing {

inline api::Json FinishedPod(int i) {
  std::string name = "finished-" + std::to_string(i);
  api::Json owner = {{"apiVersion", "batch/v1"},
                     {"kind", "Job"},
                     {"name", name},
                     {"uid", name},
                     {"controller", true}};
  api::Json container = {{"name", "main"}, {"image", "none"}, {"command", {"sleep", "1"}}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "default"}, {"ownerReferences", api::Json::array({owner})}}},
      {"spec", {{"restartPolicy", "Never"}, {"containers", api::Json::array({container})}}},
      {"status", {{"phase", "Succeeded"}}}};
}

}  // namespace trainyard::controller::testing
