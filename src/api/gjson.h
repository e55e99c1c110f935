// Trial success and failure conditions: the GJSON path subset Katib's
// trialTemplate examples and defaults use, evaluated on a job's JSON.
//
// Supported: keys separated by '.', array indices, '#' (length),
// '#(cond)' (first element matching) and '#(cond)#' (all matching), where a
// condition is `path op literal` with op one of == != < <= > >= and the
// literal a "string", number, true or false (or just `path`: the element has
// it); '@this'; the multipath '[a,b]' (an array of each path's result); and
// '|', which applies the rest of the path to the whole result, where '.'
// after '#(...)#' applies it to each element.
#pragma once

#include <string>
#include <string_view>

#include "api/json.h"

namespace trainyard::api {

struct ConditionMatch {
  bool matched = false;
  // The matched element's "reason" and "message", when it has them.
  std::string reason;
  std::string message;
};

// The path's result on `job`; null when nothing matches.
Json EvaluateGjson(const Json& job, std::string_view path);

// Katib's rule: a condition is met when the result is an object or a
// non-empty array; reason and message come from the (first) matched element.
ConditionMatch EvaluateJobCondition(const Json& job, std::string_view expression);

}  // namespace trainyard::api
