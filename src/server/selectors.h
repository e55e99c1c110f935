// Label and field selectors, as `?labelSelector=` and `?fieldSelector=`
// carry them: `app=x,tier!=db,env in (a,b),!canary,gpu` for labels;
// `metadata.name=x,status.phase!=Running` for fields, where a field is any
// dotted path into the object (kubectl describe asks for events by
// `involvedObject.name`, `.kind`, `.uid`).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json.h"
#include "common/status.h"

namespace trainyard::server {

class Selector {
 public:
  // INVALID_ARGUMENT with what is wrong, for a selector that cannot parse.
  static Result<Selector> ParseLabels(std::string_view text);
  static Result<Selector> ParseFields(std::string_view text);
  bool Matches(const api::Json& object) const;
  bool empty() const { return terms_.empty(); }
  // The terms that require one value (`k=v`, `k in (v)`): what a store's
  // index can answer (store::ListQuery).
  std::vector<std::pair<std::string, std::string>> Equalities() const;

 private:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  struct Term {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  bool fields_ = false;
  std::vector<Term> terms_;
};

}  // namespace trainyard::server
