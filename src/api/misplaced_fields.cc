#include "api/misplaced_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "api/batch_job.h"
#include "api/katib.h"
#include "api/kinds.h"
#include "api/reflect.h"
#include "api/training_job.h"
#include "common/mutex.h"

namespace trainyard::api {
namespace {

// Deep enough for a container's fields inside a job's pod template
// (spec.tfReplicaSpecs[*].template.spec.containers[*].resources.limits),
// and a bound on types that contain themselves.
constexpr size_t kMaxDepth = 16;

// Collects every field path of a reflected type.
class FieldPaths {
 public:
  std::vector<FieldPath> paths;

  template <class T>
  void Walk(const T&, const FieldPath&) {}  // strings, numbers, raw JSON: leaves
  template <class T>
  void Walk(const std::optional<T>&, const FieldPath& at) {
    Walk(T{}, at);
  }
  template <class T>
  void Walk(const std::vector<T>&, const FieldPath& at) {
    Walk(T{}, at.AnyIndex());
  }
  template <class T>
  void Walk(const std::map<std::string, T>&, const FieldPath& at) {
    Walk(T{}, at.AnyKey());
  }
  template <Reflected T>
  void Walk(const T& sample, const FieldPath& at) {
    Fields([&](auto& visit) { T::Fields(sample, visit); }, at);
    // What Kubernetes defines there and trainyard keeps without modelling.
    if constexpr (requires { T::kKubernetesType; }) {
      if (const std::vector<std::string>* names = KubernetesFieldNames(T::kKubernetesType)) {
        for (const std::string& name : *names) Add(at.Child(name));
      }
    }
  }
  // The fields a field-list function names, below `at`.
  template <class FieldsFn>
  void Fields(FieldsFn&& fields, const FieldPath& at) {
    if (at.segments().size() >= kMaxDepth) return;
    auto visit = [&](const char* key, const auto& field) {
      FieldPath path = at.Child(key);
      Add(path);
      Walk(field, path);
    };
    fields(visit);
  }

 private:
  void Add(const FieldPath& path) {
    if (seen_.insert(path.ToString()).second) paths.push_back(path);
  }
  std::set<std::string> seen_;
};

std::vector<FieldPath> AllFieldPaths(std::string_view kind) {
  FieldPaths out;
  out.Walk(ObjectMeta{}, FieldPath("metadata"));
  if (std::optional<JobKind> job = JobKindFromName(kind)) {
    static const TrainingJobSpec spec{};
    out.Fields([&](auto& visit) { TrainingJobSpec::Fields(spec, visit, *job); }, FieldPath("spec"));
  } else if (kind == "Job") {
    out.Walk(BatchJobSpec{}, FieldPath("spec"));
  } else if (kind == "Experiment") {
    out.Walk(ExperimentSpec{}, FieldPath("spec"));
  } else {
    return {};
  }
  return std::move(out.paths);
}

// Computed once per kind, on the first error that needs it.
const std::vector<FieldPath>& CachedFieldPaths(std::string_view kind) {
  static Mutex mu;
  static std::map<std::string, std::vector<FieldPath>, std::less<>> cache TRAINYARD_GUARDED_BY(mu);
  MutexLock lock(mu);
  auto it = cache.find(kind);
  if (it == cache.end()) it = cache.emplace(std::string(kind), AllFieldPaths(kind)).first;
  return it->second;
}

bool Matches(const FieldPath::Segment& place, const FieldPath::Segment& actual) {
  if (place.kind != actual.kind) return false;
  return place.text == "*" ? place.kind != FieldPath::Kind::kChild : place.text == actual.text;
}

// How many leading segments `place` shares with `actual`.
size_t Shared(const FieldPath& place, const FieldPath& actual) {
  const auto& p = place.segments();
  const auto& a = actual.segments();
  size_t n = 0;
  while (n < p.size() && n < a.size() && Matches(p[n], a[n])) ++n;
  return n;
}

// `place` with the indices and keys of `actual` where they share a prefix.
FieldPath Render(const FieldPath& place, const FieldPath& actual) {
  size_t shared = Shared(place, actual);
  FieldPath out;
  for (size_t i = 0; i < place.segments().size(); ++i) {
    const FieldPath::Segment& s = i < shared ? actual.segments()[i] : place.segments()[i];
    switch (s.kind) {
      case FieldPath::Kind::kChild:
        out = out.Child(s.text);
        break;
      case FieldPath::Kind::kIndex:
        out = s.text == "*" ? out.AnyIndex() : out.Index(std::stoll(s.text));
        break;
      case FieldPath::Kind::kKey:
        out = s.text == "*" ? out.AnyKey() : out.Key(s.text);
        break;
    }
  }
  return out;
}

}  // namespace

std::vector<FieldPath> PlacesOfField(std::string_view kind, std::string_view name) {
  std::vector<FieldPath> places;
  for (const FieldPath& path : CachedFieldPaths(kind)) {
    const FieldPath::Segment& last = path.segments().back();
    if (last.kind == FieldPath::Kind::kChild && last.text == name) places.push_back(path);
  }
  return places;
}

void HintMisplacedFields(std::string_view kind, FieldErrors& errors) {
  for (FieldError& error : errors) {
    if (error.type != FieldErrorType::kUnknownField || error.path.segments().empty()) continue;
    if (!error.belongs_at.empty() || error.detail.find("did you mean") != std::string::npos) {
      continue;  // a near name at its own level says it already
    }
    const FieldPath::Segment& last = error.path.segments().back();
    if (last.kind != FieldPath::Kind::kChild) continue;
    std::vector<FieldPath> places = PlacesOfField(kind, last.text);
    if (places.empty()) continue;
    // Nearest first: the most shared with where it was written, then the
    // shortest. A second place only when it is as near: a farther one
    // misleads more often than it helps.
    auto nearness = [&](const FieldPath& p) {
      return std::pair{Shared(p, error.path), -static_cast<int64_t>(p.segments().size())};
    };
    std::stable_sort(places.begin(), places.end(), [&](const FieldPath& a, const FieldPath& b) {
      return nearness(a) > nearness(b);
    });
    error.belongs_at.push_back(Render(places[0], error.path));
    if (places.size() > 1 && nearness(places[1]) == nearness(places[0])) {
      error.belongs_at.push_back(Render(places[1], error.path));
    }
  }
}

}  // namespace trainyard::api
