#include "cli/install_manifests.h"

#include <fmt/format.h>

#include <ostream>
#include <vector>

#include "api/crd.h"
#include "api/kinds.h"
#include "api/yaml.h"
#include "common/strings.h"
#include "kube/admission.h"

namespace trainyard::cli {
namespace {

constexpr const char* kName = "trainyard-operator";

api::Json Labels() { return {{"app.kubernetes.io/name", kName}}; }

std::vector<api::Json> Crds() {
  std::vector<api::Json> out;
  for (const api::KindInfo& info : api::AllKinds()) {
    out.push_back(api::JobCustomResourceDefinition(info.kind));
  }
  // Katib's, for `trainyard operator --katib`.
  for (const char* kind : {"Experiment", "Suggestion", "Trial"}) {
    out.push_back(api::KatibCustomResourceDefinition(kind));
  }
  // Kubeflow Trainer v2's, for `trainyard operator --trainer` (JobSet's
  // come with JobSet, whose controller runs what it makes).
  for (const char* kind :
       {"ClusterTrainingRuntime", "OptimizationJob", "TrainJob", "TrainingRuntime"}) {
    out.push_back(api::TrainerCustomResourceDefinition(kind));
  }
  return out;
}

api::Json Rule(std::vector<std::string> groups, std::vector<std::string> resources,
               std::vector<std::string> verbs) {
  return {{"apiGroups", groups}, {"resources", resources}, {"verbs", verbs}};
}

// Exactly what the operator does: it follows jobs, pods, services and
// ConfigMaps (list, watch; get on a write's conflict), writes job status,
// deletes a job whose TTL ran out, makes and removes pods, services and an
// MPIJob's ConfigMap, records events (and removes a deleted job's), and
// holds its Lease. With --katib, it makes and updates a trial's job (of
// any kind, batch/v1 Jobs included), reconciles Katib's kinds, and reads
// StdOut trials' pod logs.
api::Json ClusterRole() {
  std::vector<std::string> jobs, statuses;
  for (const api::KindInfo& info : api::AllKinds()) {
    jobs.emplace_back(info.plural);
    statuses.push_back(std::string(info.plural) + "/status");
  }
  return {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRole"},
      {"metadata", {{"name", kName}, {"labels", Labels()}}},
      {"rules",
       {Rule({"kubeflow.org"}, jobs, {"create", "delete", "get", "list", "update", "watch"}),
        Rule({"kubeflow.org"}, statuses, {"get", "update"}),
        Rule({""}, {"pods", "services"}, {"create", "delete", "get", "list", "watch"}),
        Rule({""}, {"configmaps"}, {"create", "get", "list", "update", "watch"}),
        // An MPIJob launcher's account, and the role that lets it exec
        // into its workers (granting pods/exec needs holding it).
        Rule({""}, {"serviceaccounts"}, {"create", "get", "list", "watch"}),
        Rule({"rbac.authorization.k8s.io"}, {"roles", "rolebindings"},
             {"create", "get", "list", "update", "watch"}),
        Rule({""}, {"pods/exec"}, {"create"}), Rule({""}, {"events"}, {"create", "delete", "list"}),
        Rule({"coordination.k8s.io"}, {"leases"}, {"create", "get", "update"}),
        // --gang-scheduler-name: a PodGroup per job (Volcano's, or
        // scheduler-plugins'), and the PriorityClasses its minResources
        // are ordered by.
        Rule({"scheduling.volcano.sh", "scheduling.x-k8s.io"}, {"podgroups"},
             {"create", "delete", "get", "list", "update", "watch"}),
        Rule({"scheduling.k8s.io"}, {"priorityclasses"}, {"get", "list", "watch"}),
        // --gang-scheduler-name trainyard: it reads the nodes, binds pods
        // and says on a pod why it waits.
        Rule({""}, {"nodes"}, {"get", "list", "watch"}), Rule({""}, {"pods/binding"}, {"create"}),
        Rule({""}, {"pods/status"}, {"update"}),
        Rule({"admissionregistration.k8s.io"},
             {"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
             {"get", "update"}),
        // --katib: experiments make trials and a suggestion; trials make
        // jobs, batch/v1 Jobs among them; StdOut trials' logs are read.
        Rule({"kubeflow.org"}, {"experiments", "suggestions", "trials"},
             {"create", "delete", "get", "list", "update", "watch"}),
        Rule({"kubeflow.org"}, {"experiments/status", "suggestions/status", "trials/status"},
             {"get", "update"}),
        Rule({"batch"}, {"jobs"}, {"create", "delete", "get", "list", "update", "watch"}),
        Rule({""}, {"pods/log"}, {"get"}),
        // --trainer: TrainJobs and their runtimes are read, a TrainJob's
        // status written, its JobSet made, rebuilt while suspended, and
        // deleted past its deadline; with --katib, trials are TrainJobs
        // made, suspended and deleted.
        Rule({"trainer.kubeflow.org"}, {"trainjobs"},
             {"create", "delete", "get", "list", "update", "watch"}),
        Rule({"trainer.kubeflow.org"}, {"trainingruntimes", "clustertrainingruntimes"},
             {"get", "list", "watch"}),
        Rule({"trainer.kubeflow.org"}, {"trainjobs/status"}, {"get", "patch", "update"}),
        // An OptimizationJob is read, its status written; its trials are
        // TrainJobs (above).
        Rule({"trainer.kubeflow.org"}, {"optimizationjobs"}, {"get", "list", "watch"}),
        Rule({"trainer.kubeflow.org"}, {"optimizationjobs/status"}, {"get", "update"}),
        // Trainers' progress reports: each token is checked by the API
        // server; one bound to a pod, against the pod.
        Rule({"authentication.k8s.io"}, {"tokenreviews"}, {"create"}),
        // An MPI runtime's SSH key Secret, made once per TrainJob.
        Rule({""}, {"secrets"}, {"create", "get"}),
        Rule({"jobset.x-k8s.io"}, {"jobsets"},
             {"create", "delete", "get", "list", "update", "watch"})}}};
}

// The webhook certificate's Secret, in the operator's namespace only.
std::vector<api::Json> SecretAccess(const InstallOptions& o) {
  api::Json meta = {{"name", kName}, {"namespace", o.namespace_}, {"labels", Labels()}};
  return {
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "Role"},
       {"metadata", meta},
       {"rules", {Rule({""}, {"secrets"}, {"create", "get", "update"})}}},
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "RoleBinding"},
       {"metadata", meta},
       {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", kName}}},
       {"subjects", {{{"kind", "ServiceAccount"}, {"name", kName}, {"namespace", o.namespace_}}}}}};
}

// The Service the API server calls the webhooks through, and one mutating
// and one validating webhook per job kind and for Experiments (CREATE and
// UPDATE; their
// caBundle is filled in by the operator, kube/webhook_setup.h).
std::vector<api::Json> Webhooks(const InstallOptions& o) {
  std::vector<api::Json> out = {
      {{"apiVersion", "v1"},
       {"kind", "Service"},
       {"metadata", {{"name", kName}, {"namespace", o.namespace_}, {"labels", Labels()}}},
       {"spec",
        {{"selector", Labels()},
         {"ports",
          {{{"name", "webhook"}, {"port", 443}, {"targetPort", 9443}},
           {{"name", "metrics"}, {"port", kMetricsServicePort}, {"targetPort", "metrics"}},
           {{"name", "status-server"},
            {"port", kTrainerStatusServicePort},
            {"targetPort", "status-server"}}}}}}}};
  for (bool mutate : {true, false}) {
    api::Json hooks = api::Json::array();
    for (const api::ResourceType* type : kube::AdmittedKinds()) {
      hooks.push_back(
          {{"name", fmt::format("{}.{}.trainyard.kubeflow.org", mutate ? "defaulter" : "validator",
                                AsciiLower(type->kind))},
           {"admissionReviewVersions", {"v1"}},
           {"sideEffects", "None"},
           {"failurePolicy", "Fail"},
           {"timeoutSeconds", 10},
           {"clientConfig",
            {{"service",
              {{"name", kName},
               {"namespace", o.namespace_},
               {"path", kube::WebhookPath(type->kind, mutate)},
               {"port", 443}}}}},
           // `scope` as kube-apiserver defaults it: a rule list is replaced
           // whole by `kubectl apply`, so one the server completed would
           // be sent again at every apply.
           {"rules",
            {{{"apiGroups", {"kubeflow.org"}},
              {"apiVersions", {type->version}},
              {"operations", {"CREATE", "UPDATE"}},
              {"resources", {type->plural}},
              {"scope", "*"}}}}});
    }
    out.push_back(
        {{"apiVersion", "admissionregistration.k8s.io/v1"},
         {"kind", mutate ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"},
         {"metadata", {{"name", kName}, {"labels", Labels()}}},
         {"webhooks", hooks}});
  }
  return out;
}

std::vector<api::Json> Rbac(const InstallOptions& o) {
  std::vector<api::Json> out = {
      {{"apiVersion", "v1"},
       {"kind", "ServiceAccount"},
       {"metadata", {{"name", kName}, {"namespace", o.namespace_}, {"labels", Labels()}}}},
      ClusterRole(),
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRoleBinding"},
       {"metadata", {{"name", kName}, {"labels", Labels()}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", kName}}},
       {"subjects", {{{"kind", "ServiceAccount"}, {"name", kName}, {"namespace", o.namespace_}}}}}};
  for (api::Json& access : SecretAccess(o)) out.push_back(std::move(access));
  return out;
}

std::vector<api::Json> Operator(const InstallOptions& o) {
  api::Json container = {
      {"name", "operator"},
      {"image", o.image},
      {"args", {"operator", "--leader-elect"}},
      {"ports",
       {{{"name", "webhook-server"}, {"containerPort", 9443}},
        {{"name", "metrics"}, {"containerPort", 8080}},
        {{"name", "probes"}, {"containerPort", 8081}},
        {{"name", "status-server"}, {"containerPort", kTrainerStatusServicePort}}}},
      {"livenessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", "probes"}}}, {"periodSeconds", 20}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/readyz"}, {"port", "probes"}}}, {"periodSeconds", 10}}},
      {"resources",
       {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}, {"limits", {{"memory", "512Mi"}}}}},
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", 65532},
        {"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", {"ALL"}}}}}}};
  return {{{"apiVersion", "v1"},
           {"kind", "Namespace"},
           {"metadata", {{"name", o.namespace_}, {"labels", Labels()}}}},
          {{"apiVersion", "apps/v1"},
           {"kind", "Deployment"},
           {"metadata", {{"name", kName}, {"namespace", o.namespace_}, {"labels", Labels()}}},
           {"spec",
            {{"replicas", 1},
             {"selector", {{"matchLabels", Labels()}}},
             {"template",
              {{"metadata", {{"labels", Labels()}}},
               {"spec",
                {{"serviceAccountName", kName},
                 {"terminationGracePeriodSeconds", 10},
                 {"containers", {container}}}}}}}}}};
}

void Print(const std::vector<api::Json>& objects, std::ostream& out) {
  for (const api::Json& o : objects) out << "---\n" << api::ToYaml(o);
}

}  // namespace

int RunManifests(const std::string& what, const InstallOptions& options, std::ostream& out,
                 std::ostream& err) {
  if (what != "crds" && what != "rbac" && what != "webhooks" && what != "operator" &&
      what != "all") {
    err << fmt::format("trainyard manifests: {:?}: want crds, rbac, webhooks, operator or all\n",
                       what);
    return 2;
  }
  // Namespace first, then what lives in it, as kubectl applies in order.
  if (what == "all" || what == "operator") Print({Operator(options)[0]}, out);
  if (what == "all" || what == "crds") Print(Crds(), out);
  if (what == "all" || what == "rbac") Print(Rbac(options), out);
  if (what == "all" || what == "webhooks") Print(Webhooks(options), out);
  if (what == "all" || what == "operator") Print({Operator(options)[1]}, out);
  return 0;
}

}  // namespace trainyard::cli
