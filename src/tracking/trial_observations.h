// A trial's observation log as its HTTP endpoints read and answer it, the
// parts the server's API and the operator's endpoint share (server/ and
// cli/operator_endpoints.cc serve them):
//  - GET .../trials/NAME/observations: the metric values collected for it
//    in order, as Katib's GetObservationLog returns them (metricLogs of
//    timeStamp and metric name/value);
//  - POST .../trials/NAME/observations: the Push collector's endpoint, what
//    Katib's report_metrics does over gRPC, with the trial's uid as the
//    bearer token its code is given.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "api/katib.h"
#include "common/clock.h"
#include "common/field_path.h"
#include "store/observation_log.h"

namespace trainyard::tracking {

int64_t Micros(TimePoint t);

// The rows a push body holds, each stamped with its own time or `now_us`:
// Katib's ObservationLog shape ({"metricLogs": [{"timeStamp", "metric":
// {"name", "value"}}]}), or {"metrics": {"loss": 0.1, ...}} as the Katib
// SDK's report_metrics takes them; or every error, with its field path.
std::variant<std::vector<store::ObservationRow>, FieldErrors> PushedRows(const api::Json& body,
                                                                         int64_t now_us);

// The condition a finished trial ended with (Succeeded, Failed,
// MetricsUnavailable, EarlyStopped, Killed); empty while it runs.
std::string FinishedAs(const api::Trial& trial);

// A stored trial, decoded.
Result<api::Trial> StoredTrial(const api::Json& doc);

// What GET answers: Katib's ObservationLog of `rows`; with `summary`,
// beyond Katib's shape, what of the log was thinned or dropped
// (store/observation_log.h): "thinned": [{name, values, kept: "1 in N"}],
// "droppedValues".
api::Json ObservationLogDocument(const std::string& namespace_, const std::string& trial,
                                 const std::vector<store::ObservationRow>& rows,
                                 const store::ObservationSummary* summary = nullptr);

// Whether `token` is the stored trial's own push token (its uid).
bool IsTrialsToken(const api::Json& trial, const std::string& token);

// What a push that recorded `rows` values answers.
api::Json PushedStatus(size_t rows, const std::string& trial);

}  // namespace trainyard::tracking
