// trainyard's own client verbs for a running `trainyard server`: apply,
// get, describe, logs, delete, suspend, resume and events. Human output by
// default (the server's tables, as kubectl prints them); `-o yaml|json`
// for scripts. Each returns the process exit code: 0 on success, 1 when
// the server refused something (its message printed), 2 for usage errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/api_client.h"

namespace trainyard::cli {

struct ClientCommand {
  ClientOptions connection;
  std::string namespace_;  // empty: "default"
  bool all_namespaces = false;
  std::string output;  // "", "wide", "yaml", "json"
};

int RunApply(const ClientCommand& command, const std::vector<std::string>& paths);
int RunGet(const ClientCommand& command, const std::string& kind,
           const std::vector<std::string>& names);
int RunDescribe(const ClientCommand& command, const std::string& kind, const std::string& name);

struct LogsOptions {
  bool follow = false;
  bool previous = false;
  std::optional<int64_t> tail;
  std::string container;
};
int RunLogs(const ClientCommand& command, const std::string& pod, const LogsOptions& options);
// A job's own metrics (a trial's too): `trainyard metrics pytorchjob NAME
// [--metric loss]` (cli/metrics_view.h).
int RunMetrics(const ClientCommand& command, const std::string& kind, const std::string& name,
               const std::string& metric);

int RunDelete(const ClientCommand& command, const std::string& kind,
              const std::vector<std::string>& names);
// Suspends (or resumes) jobs: runPolicy.suspend, or spec.suspend for a batch/v1 Job.
int RunSuspend(const ClientCommand& command, const std::string& kind,
               const std::vector<std::string>& names, bool suspend);
// Events in the namespace, or about one object ("pytorchjob/mnist").
int RunEvents(const ClientCommand& command, const std::string& about);

}  // namespace trainyard::cli
