// Katib trial templates: from an Experiment's template and one assignment to
// the job a trial runs.
//
// `${trialParameters.<name>}` is replaced by the value of what the trial
// parameter references: a search parameter's assigned value, or the trial
// job's own metadata (`${trialSpec.Name}`, `.Namespace`, `.Kind`,
// `.APIVersion`, `.Labels[key]`, `.Annotations[key]`). Upstream replaces in
// the template's text, so a value with a quote breaks the JSON; here the
// replacement is made inside each string of the document instead.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "api/json.h"
#include "api/katib.h"
#include "common/status.h"

namespace trainyard::api {

// The metadata reference forms a trial parameter may name.
bool IsMetadataReference(std::string_view reference);

// Every `${trialParameters.<name>}` name in the document's strings.
std::set<std::string> TemplatePlaceholders(const Json& document);

struct TrialJobIdentity {
  std::string name;  // the trial's (and its job's) name
  std::string namespace_;
};

// The job for one trial: `template_spec` (trialSpec, or the configMap's
// parsed template) rendered with `assignments` (parameter name -> value) and
// given the trial's name and namespace. An error names what is missing.
Result<Json> RenderTrialJob(const Json& template_spec,
                            const std::vector<TrialParameterSpec>& trial_parameters,
                            const std::map<std::string, std::string>& assignments,
                            const TrialJobIdentity& identity);

}  // namespace trainyard::api
