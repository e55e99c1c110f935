// The client verbs, for a running server (or a finished run's folder read
// back). Only one runs: they share one set of arguments.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/artifacts_command.h"
#include "cli/client_commands.h"
#include "cli/command_line.h"

namespace trainyard::cli {
namespace {

struct ClientArgs {
  ClientCommand client;
  std::vector<std::string> files, names;
  std::string kind, name, pod, about, metric;
  LogsOptions logs;
  int64_t tail = -1;
  ArtifactsOptions artifacts;
};
using Args = std::shared_ptr<ClientArgs>;

// Where the server is, and the namespace: every verb's.
void AddConnectionFlags(CLI::App* cmd, ClientArgs& args) {
  ClientCommand& client = args.client;
  cmd->add_option("--server", client.connection.server,
                  "The server's URL (default: $TRAINYARD_SERVER, else the kubeconfig's)");
  cmd->add_option("--kubeconfig", client.connection.kubeconfig,
                  "The kubeconfig naming the server (default: <--home>/kubeconfig when --home "
                  "is given, else $KUBECONFIG, else the default home's)");
  cmd->add_option("--home", client.connection.home, "A server's home, whose kubeconfig to use");
  cmd->add_option("--run", client.connection.run,
                  "A finished `trainyard run`'s folder (its \"state and logs\"), read back "
                  "instead of a server");
  cmd->add_option("--token", client.connection.token, "A bearer token (default: the kubeconfig's)");
  cmd->add_option("-n,--namespace", client.namespace_, "The namespace (default: default)");
}

// A verb whose callback sets the exit code to what `run` returns.
CLI::App* AddVerb(CLI::App& app, const Args& args, int& exit_code, const char* name,
                  const char* help, std::function<int(ClientArgs&)> run) {
  CLI::App* cmd = app.add_subcommand(name, help);
  AddConnectionFlags(cmd, *args);
  cmd->callback([args, &exit_code, run = std::move(run)] { exit_code = run(*args); });
  return cmd;
}

void AddGetAndDescribe(CLI::App& app, const Args& a, int& exit_code) {
  CLI::App* get =
      AddVerb(app, a, exit_code, "get", "List or show objects: get pytorchjobs, get pods NAME",
              [](ClientArgs& x) { return RunGet(x.client, x.kind, x.names); });
  get->add_option("kind", a->kind,
                  "pytorchjobs, tfjobs, xgboostjobs, mpijobs, paddlejobs, jaxjobs, jobs, "
                  "trainjobs, jobsets, experiments, trials, suggestions, pods, events, "
                  "namespaces, nodes, configmaps, secrets, services, clusterqueues, queues "
                  "(LocalQueues), priorityclasses, resourcequotas: any plural, singular or "
                  "short name the server serves")
      ->required();
  get->add_option("names", a->names, "Only these");
  get->add_flag("-A,--all-namespaces", a->client.all_namespaces, "Every namespace");
  get->add_option("-o,--output", a->client.output, "wide, yaml or json")
      ->check(CLI::IsMember({"wide", "yaml", "json"}));
  CLI::App* describe =
      AddVerb(app, a, exit_code, "describe", "A job's conditions, replicas and events",
              [](ClientArgs& x) { return RunDescribe(x.client, x.kind, x.name); });
  describe->add_option("kind", a->kind, "The kind: pytorchjob, tfjob, job, ...")->required();
  describe->add_option("name", a->name, "The object's name")->required();
  describe->add_option("-o,--output", a->client.output, "yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}));
}

void AddOutputVerbs(CLI::App& app, const Args& a, int& exit_code) {
  CLI::App* logs = AddVerb(app, a, exit_code, "logs", "A replica's log: logs mnist-worker-0 [-f]",
                           [](ClientArgs& x) {
                             if (x.tail >= 0) x.logs.tail = x.tail;
                             return RunLogs(x.client, x.pod, x.logs);
                           });
  logs->add_option("pod", a->pod, "The replica's pod")->required();
  logs->add_flag("-f,--follow", a->logs.follow, "Follow it while the replica runs");
  logs->add_flag("-p,--previous", a->logs.previous, "The run before the last restart");
  logs->add_option("--tail", a->tail, "Only the last N lines");
  logs->add_option("-c,--container", a->logs.container, "The container");
  CLI::App* metrics =
      AddVerb(app, a, exit_code, "metrics",
              "A job's own metrics, or a trial's: metrics pytorchjob NAME [--metric loss]",
              [](ClientArgs& x) { return RunMetrics(x.client, x.kind, x.name, x.metric); });
  metrics->add_option("kind", a->kind, "The kind: pytorchjob, tfjob, ..., trial")->required();
  metrics->add_option("name", a->name, "The job's name")->required();
  metrics->add_option("--metric", a->metric, "Every value of this metric, with its step");
  CLI::App* artifacts = AddVerb(
      app, a, exit_code, "artifacts",
      "What a job's replicas wrote to $TRAINYARD_OUTPUT_DIR: artifacts pytorchjob NAME [PATH]",
      [](ClientArgs& x) { return RunArtifacts(x.client, x.artifacts); });
  artifacts->add_option("kind", a->artifacts.kind, "The kind: pytorchjob, ..., trial")->required();
  artifacts->add_option("name", a->artifacts.name, "The job's name")->required();
  artifacts->add_option("path", a->artifacts.path, "One file to download (else: list them)");
  artifacts->add_option("-o,--output", a->artifacts.output,
                        "Where the file goes: a path, or - for stdout (default: its own name "
                        "here)");
}

void AddDeleteAndSuspend(CLI::App& app, const Args& a, int& exit_code) {
  CLI::App* del = AddVerb(app, a, exit_code, "delete", "Delete objects: delete pytorchjob NAME...",
                          [](ClientArgs& x) { return RunDelete(x.client, x.kind, x.names); });
  del->add_option("kind", a->kind, "The kind")->required();
  del->add_option("names", a->names, "Their names")->required();
  CLI::App* suspend =
      AddVerb(app, a, exit_code, "suspend", "Suspend jobs: their replicas stop, the jobs stay",
              [](ClientArgs& x) { return RunSuspend(x.client, x.kind, x.names, true); });
  CLI::App* resume =
      AddVerb(app, a, exit_code, "resume", "Resume suspended jobs",
              [](ClientArgs& x) { return RunSuspend(x.client, x.kind, x.names, false); });
  for (CLI::App* cmd : {suspend, resume}) {
    cmd->add_option("kind", a->kind, "The kind: pytorchjob, ..., job")->required();
    cmd->add_option("names", a->names, "Their names")->required();
  }
}

}  // namespace

void AddClientCommands(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ClientArgs>();
  CLI::App* apply = AddVerb(app, a, exit_code, "apply", "Create or update objects on the server",
                            [](ClientArgs& x) { return RunApply(x.client, x.files); });
  apply->add_option("-f,--filename", a->files, "Manifest files or directories; - for stdin")
      ->required();
  AddGetAndDescribe(app, a, exit_code);
  AddOutputVerbs(app, a, exit_code);
  AddDeleteAndSuspend(app, a, exit_code);
  CLI::App* events = AddVerb(app, a, exit_code, "events", "What the controllers did, newest last",
                             [](ClientArgs& x) { return RunEvents(x.client, x.about); });
  events->add_option("--for", a->about, "Only about this object: KIND/NAME");
  events->add_flag("-A,--all-namespaces", a->client.all_namespaces, "Every namespace");
}

}  // namespace trainyard::cli
