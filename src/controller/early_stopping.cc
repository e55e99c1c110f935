#include "controller/early_stopping.h"

#include "tune/metrics.h"

namespace trainyard::controller {

Result<tune::MedianStopSettings> MedianStopOf(const std::vector<api::AlgorithmSetting>& settings) {
  tune::Settings pairs;
  for (const api::AlgorithmSetting& s : settings) pairs.emplace_back(s.name, s.value);
  return tune::ParseMedianStopSettings(pairs);
}

Result<std::vector<double>> ObservedLosses(const store::ObservationLog& log,
                                           const std::string& log_id, const std::string& metric,
                                           bool maximize) {
  ASSIGN_OR_RETURN(store::ObservationPage page, log.ListObservations(log_id, {.metric = metric}));
  std::vector<double> series;
  for (const store::ObservationRow& row : page.rows) {
    std::optional<double> value = tune::ParseMetricValue(row.value);
    if (value) series.push_back(maximize ? -*value : *value);
  }
  return series;
}

}  // namespace trainyard::controller
