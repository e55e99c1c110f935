// The columns `kubectl get` prints for each kind (a server-side Table's
// columnDefinitions and cells): a CRD's additionalPrinterColumns for the
// Kubeflow kinds, kubectl's own for the core ones. Each kind's descriptor
// (api/registry.h) names its set; the server renders them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/json.h"
#include "common/clock.h"

namespace trainyard::api {

struct PrinterColumn {
  std::string name;
  std::string type;  // "string", "integer", "date"
  std::string format;
  int priority = 0;  // 1: only with -o wide
  // The cell of one object. Objects come from clients, status included:
  // read them with json.h's accessors, which never throw.
  std::function<Json(const Json&, TimePoint)> cell;
};

// Kubernetes' age format: "45s", "3m20s", "5h", "12d".
std::string HumanDuration(Duration d);
// The age of an RFC 3339 timestamp at `now`; "<unknown>" when unreadable.
std::string Age(const std::string& timestamp, TimePoint now);

PrinterColumn NameColumn();
PrinterColumn AgeColumn();

// Each kind's set (an empty vector for a kind not of the set's family).
std::vector<PrinterColumn> PodColumns();
std::vector<PrinterColumn> BatchJobColumns();
std::vector<PrinterColumn> TrainingJobColumns();
// PROGRESS ("42%") and ETA ("2m") from status.trainerStatus (KEP-2779's,
// and what trainyard reads of a job's output), blank without it.
std::vector<PrinterColumn> ProgressColumns(int priority);
std::vector<PrinterColumn> TrainJobColumns();
std::vector<PrinterColumn> OptimizationJobColumns();
// Its columns past Name and Age as {name, JSON path}, for its CRD.
const std::vector<std::pair<std::string, std::string>>& OptimizationJobColumnPaths();
std::vector<PrinterColumn> JobSetColumns();
std::vector<PrinterColumn> EventColumns();
std::vector<PrinterColumn> LeaseColumns();
// NAME and AGE, for kinds kept only to be listed.
std::vector<PrinterColumn> NameAgeColumns();
std::vector<PrinterColumn> NamespaceColumns();
std::vector<PrinterColumn> NodeColumns();
std::vector<PrinterColumn> ConfigMapColumns();
std::vector<PrinterColumn> SecretColumns();
std::vector<PrinterColumn> ServiceColumns();
std::vector<PrinterColumn> DeploymentColumns();
std::vector<PrinterColumn> PersistentVolumeClaimColumns();
std::vector<PrinterColumn> ExperimentColumns();
std::vector<PrinterColumn> TrialColumns();
std::vector<PrinterColumn> SuggestionColumns();
// ClusterQueue, LocalQueue, ResourceFlavor, PriorityClass, ResourceQuota.
std::vector<PrinterColumn> ClusterQueueColumns();
std::vector<PrinterColumn> LocalQueueColumns();
std::vector<PrinterColumn> PriorityClassColumns();
std::vector<PrinterColumn> ResourceQuotaColumns();

}  // namespace trainyard::api
