// The tracking API's records: a request's fields, metric values, and runs
// and experiments as the store keeps them (mlflow_internal.h).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "api/object.h"
#include "api/registry.h"
#include "api/tracking.h"
#include "api/yaml.h"
#include "common/strings.h"
#include "server/mlflow_internal.h"
#include "server/mlflow_methods.h"

namespace trainyard::server::mlflow {
namespace {

// What a log's microseconds hold: years 1678 to 2262.
constexpr int64_t kMaxMillis = 9'000'000'000'000;

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || std::from_chars(text.data(), end, value).ptr != end) return std::nullopt;
  return value;
}

}  // namespace

Result<Args> Args::FromBody(std::string_view body) {
  Args args;
  if (body.empty()) return args;
  ASSIGN_OR_RETURN(args.doc_, api::ParseJsonValue(body, "the request body"));
  if (!args.doc_.is_object()) return InvalidArgumentError("the request body must be a JSON object");
  return args;
}

Args Args::FromQuery(const std::multimap<std::string, std::string>& query) {
  Args args;
  for (const auto& [name, value] : query) {
    if (!args.doc_.contains(name)) args.doc_[name] = value;
  }
  return args;
}

std::string Args::Optional(std::string_view name) const {
  auto it = doc_.find(name);
  return it != doc_.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<std::string> Args::Required(std::string_view name) const {
  auto it = doc_.find(name);
  if (it != doc_.end() && !it->is_string() && !it->is_null()) {
    return InvalidArgumentError(fmt::format("{}: must be a string", name));
  }
  std::string value = Optional(name);
  if (value.empty()) {
    return InvalidArgumentError(fmt::format("Missing value for required parameter '{}'", name));
  }
  return value;
}

Result<std::string> Args::Id(std::string_view name) const {
  auto it = doc_.find(name);
  // An id is a string; a number is taken as its digits, as MLflow's server
  // does (experiment ids are numbers there).
  if (it != doc_.end() && it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return Required(name);
}

Result<std::string> Args::RunId() const {
  std::string id = Optional("run_id");
  if (id.empty()) id = Optional("run_uuid");
  if (id.empty()) return InvalidArgumentError("Missing value for required parameter 'run_id'");
  return id;
}

Result<std::optional<int64_t>> Args::Int(std::string_view name) const {
  auto it = doc_.find(name);
  if (it == doc_.end() || it->is_null()) return std::optional<int64_t>();
  if (it->is_number_integer()) return std::optional<int64_t>(it->get<int64_t>());
  if (it->is_number_float()) {
    // MLflow's client rounds what it is given; a JSON number may carry it.
    double d = it->get<double>();
    if (std::isfinite(d) && std::fabs(d) < 9.2e18) {
      return std::optional<int64_t>(static_cast<int64_t>(std::llround(d)));
    }
  }
  if (it->is_string()) {
    if (std::optional<int64_t> v = ParseInt(it->get<std::string>())) return std::optional(*v);
  }
  return InvalidArgumentError(fmt::format("{}: {} is not a whole number", name, it->dump()));
}

Result<std::vector<std::string>> Args::Strings(std::string_view name) const {
  std::vector<std::string> out;
  auto it = doc_.find(name);
  if (it == doc_.end() || it->is_null()) return out;
  if (it->is_string()) return std::vector<std::string>{it->get<std::string>()};
  if (!it->is_array()) return InvalidArgumentError(fmt::format("{}: must be a list", name));
  for (const api::Json& item : *it) {
    if (!item.is_string()) {
      return InvalidArgumentError(fmt::format("{}: every entry must be a string", name));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::string> MetricText(const api::Json& value, std::string_view field) {
  if (value.is_number()) {
    double d = value.get<double>();
    return fmt::format("{}", d);
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "NaN" || text == "Infinity" || text == "-Infinity") return text;
    double d = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, d);
    if (!text.empty() && ec == std::errc() && ptr == end && std::isfinite(d)) {
      return fmt::format("{}", d);
    }
  }
  return InvalidArgumentError(fmt::format(
      "{}: {} is not a number (a number, or \"NaN\", \"Infinity\", \"-Infinity\")", field,
      value.is_string() || value.is_number() ? value.dump() : std::string(value.type_name())));
}

api::Json MetricJson(const std::string& text) {
  if (text == "NaN" || text == "Infinity" || text == "-Infinity") return text;
  double d = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, d);
  if (ec != std::errc() || ptr != end) {
    // A collected value Katib kept as written ("+1.5", " 2"): read leniently.
    char* stop = nullptr;
    d = std::strtod(text.c_str(), &stop);
  }
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

Result<int64_t> CheckedMillis(int64_t ms, std::string_view field) {
  if (ms < -kMaxMillis || ms > kMaxMillis) {
    return InvalidArgumentError(fmt::format(
        "{}: {} is not a time in milliseconds since 1970 before the year 2262", field, ms));
  }
  return ms;
}

int64_t NowMillis(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
      .count();
}

namespace {

std::string RunNotFound(const std::string& run_id) {
  return fmt::format("Run with id={} not found", run_id);
}

// MLflow's status of a job or trial that has not set one itself.
std::string StatusOf(const api::Json& owner) {
  for (const api::Json& c : api::ArrayRefAt(owner, {"status", "conditions"})) {
    if (api::StringAt(c, "status") != "True") continue;
    std::string type = api::StringAt(c, "type");
    if (type == "Succeeded" || type == "Complete") return "FINISHED";
    if (type == "Failed") return "FAILED";
  }
  return "RUNNING";
}

int64_t CreatedMillis(const api::Json& object) {
  std::optional<TimePoint> created =
      ParseRfc3339(api::StringAt(object, {"metadata", "creationTimestamp"}));
  if (!created) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(created->time_since_epoch()).count();
}

// The container a job's parameters are read from: its master role's (or
// its first role's) first container, a TrainJob's trainer, a batch Job's
// or JobSet's first.
const api::Json* MainContainer(const std::string& kind, const api::Json& job) {
  const api::Json* spec = api::FindAt(job, {"spec"});
  if (spec == nullptr || !spec->is_object()) return nullptr;
  auto first = [](const api::Json* pod_spec) -> const api::Json* {
    const api::Json* containers = pod_spec ? api::FindAt(*pod_spec, {"containers"}) : nullptr;
    return containers && containers->is_array() && !containers->empty() ? &(*containers)[0]
                                                                        : nullptr;
  };
  if (kind == "TrainJob") return api::FindAt(*spec, {"trainer"});
  if (kind == "Job") return first(api::FindAt(*spec, {"template", "spec"}));
  if (kind == "JobSet") {
    const api::Json* jobs = api::FindAt(*spec, {"replicatedJobs"});
    if (jobs == nullptr || !jobs->is_array() || jobs->empty()) return nullptr;
    return first(api::FindAt((*jobs)[0], {"template", "spec", "template", "spec"}));
  }
  for (const auto& [key, roles] : spec->items()) {
    if (!key.ends_with("ReplicaSpecs") || !roles.is_object() || roles.empty()) continue;
    for (const char* master : {"Master", "Chief", "Launcher"}) {
      if (roles.contains(master)) return first(api::FindAt(roles[master], {"template", "spec"}));
    }
    return first(api::FindAt(roles.begin().value(), {"template", "spec"}));
  }
  return nullptr;
}

// An argument as a shell would need it written: as it is when it holds
// nothing a shell reads specially.
std::string QuotedIfNeeded(const std::string& arg) {
  bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-./=:,@%+").find(c) != std::string_view::npos;
  });
  return plain ? arg : ShellQuote(arg);
}

// What a job or trial was run with, as MLflow params: a trial's parameter
// assignments; a job's main container's command and arguments
// (`trainyard.command`) and literal env values (`trainyard.env.NAME`;
// never a value from a Secret or ConfigMap).
api::Json DerivedParams(const std::string& kind, const api::Json& owner) {
  api::Json params = api::Json::array();
  auto add = [&](std::string key, std::string value) {
    if (value.size() > kMaxParamValue) {
      // Cut at a character's start: half a UTF-8 character is no JSON.
      size_t n = kMaxParamValue;
      while (n > 0 && (static_cast<unsigned char>(value[n]) & 0xC0) == 0x80) --n;
      value.resize(n);
    }
    params.push_back({{"key", std::move(key)}, {"value", std::move(value)}});
  };
  if (kind == "Trial") {
    for (const api::Json& p : api::ArrayRefAt(owner, {"spec", "parameterAssignments"})) {
      add(api::StringAt(p, "name"), api::StringAt(p, "value"));
    }
    return params;
  }
  const api::Json* container = MainContainer(kind, owner);
  if (container == nullptr) return params;
  std::vector<std::string> argv;
  for (const char* field : {"command", "args"}) {
    for (const api::Json& a : api::ArrayRefAt(*container, {field})) {
      if (a.is_string()) argv.push_back(QuotedIfNeeded(a.get<std::string>()));
    }
  }
  if (!argv.empty()) add("trainyard.command", Join(argv, " "));
  for (const api::Json& e : api::ArrayRefAt(*container, {"env"})) {
    std::string name = api::StringAt(e, "name");
    if (!name.empty() && e.contains("value") && e["value"].is_string()) {
      add("trainyard.env." + name, e["value"].get<std::string>());
    }
  }
  return params;
}

// The run a job or trial is before anything was logged to it.
Run OwnersRun(const api::TrackedObject& owned, const api::Json& owner, const std::string& ns,
              const std::string& run_id) {
  Run run;
  run.info = {{"run_id", run_id},
              {"run_uuid", run_id},
              {"run_name", owned.name},
              {"experiment_id", kDefaultExperiment},
              {"user_id", ""},
              {"status", StatusOf(owner)},
              {"start_time", CreatedMillis(owner)},
              {"artifact_uri", fmt::format("mlflow-artifacts:/{}/{}/artifacts", ns, run_id)},
              {"lifecycle_stage", "active"}};
  run.params = api::Json::array();
  run.derived_params = DerivedParams(owned.kind, owner);
  run.tags = api::Json::array({{{"key", "mlflow.runName"}, {"value", owned.name}},
                               {{"key", "trainyard.dev/kind"}, {"value", owned.kind}}});
  run.metrics_log = owned.kind == "Trial" ? ns + "/" + owned.name
                                          : store::JobObservationsId(owned.kind, ns, owned.name);
  run.owner_uid = api::StringAt(owner, {"metadata", "uid"});
  run.owner_ref = {{"apiVersion", api::StringAt(owner, "apiVersion")},
                   {"kind", owned.kind},
                   {"name", owned.name},
                   {"uid", run.owner_uid}};
  return run;
}

}  // namespace

namespace {

// The job or trial `run_id` names, as stored; nothing when it names none
// (a client's run) or that object is gone.
Result<std::optional<api::Json>> OwnerOf(const store::ObjectReader& store,
                                         const std::string& namespace_, const std::string& run_id,
                                         std::optional<api::TrackedObject>& owned) {
  owned = api::TrackedObjectOf(run_id);
  const api::ResourceType* type = owned ? api::ResourceTypeOfKind(owned->kind) : nullptr;
  if (type == nullptr || api::TrackingRunId(owned->kind, owned->name) != run_id) {
    return std::optional<api::Json>();
  }
  Result<api::Json> owner = store.Get({type->store_kind, namespace_, owned->name});
  if (owner.status().code() == StatusCode::kNotFound) return std::optional<api::Json>();
  RETURN_IF_ERROR(owner.status());
  return std::optional<api::Json>(std::move(*owner));
}

}  // namespace

Result<Run> LoadRun(const store::ObjectReader& store, const std::string& namespace_,
                    const std::string& run_id) {
  std::optional<api::TrackedObject> owned;
  ASSIGN_OR_RETURN(std::optional<api::Json> owner, OwnerOf(store, namespace_, run_id, owned));
  Result<api::Json> kept = store.Get({std::string(kRunKind), namespace_, run_id});
  if (!kept.ok() && kept.status().code() != StatusCode::kNotFound) return kept.status();
  if (kept.ok()) {
    const api::Json& spec = (*kept)["spec"];
    Run run{.info = spec.value("info", api::Json::object()),
            .params = spec.value("params", api::Json::array()),
            .tags = spec.value("tags", api::Json::array()),
            .metrics_log = spec.value("metricsLog", ""),
            .owner_uid = spec.value("ownerUid", ""),
            .owner_ref = nullptr,
            .stored = true};
    for (const api::Json& ref : api::ArrayRefAt(*kept, {"metadata", "ownerReferences"})) {
      run.owner_ref = ref;
    }
    // A job's run kept from an earlier job of the same name (deleted before
    // its run was collected) is not this job's: this one starts afresh.
    bool earlier = !run.owner_uid.empty() &&
                   (!owner || api::StringAt(*owner, {"metadata", "uid"}) != run.owner_uid);
    if (!earlier) {
      // A replica killed, or a job failed, never says its run ended: the
      // job's own state does.
      if (owner && run.info.value("status", "") == "RUNNING") run.info["status"] = StatusOf(*owner);
      if (owner) run.derived_params = DerivedParams(owned->kind, *owner);
      return run;
    }
  }
  if (!owner) return NotFoundError(RunNotFound(run_id));
  Run run = OwnersRun(*owned, *owner, namespace_, run_id);
  run.stored = kept.ok();  // an earlier job's, to be replaced
  return run;
}

std::string RunOfToken(const store::ObjectReader& store, const std::string& namespace_,
                       const std::string& token) {
  if (token.empty()) return "";
  std::vector<std::string> kinds = api::JobKindNames();
  kinds.emplace_back("Trial");
  std::string found;
  for (const std::string& kind : kinds) {
    const api::ResourceType* type = api::ResourceTypeOfKind(kind);
    if (type == nullptr) continue;
    (void)store.Scan(type->store_kind, namespace_, [&](const api::Json& object) {
      if (ConstantTimeEquals(api::StringAt(object, {"metadata", "uid"}), token)) {
        found = api::TrackingRunId(kind, api::StringAt(object, {"metadata", "name"}));
      }
    });
    if (!found.empty()) break;
  }
  return found;
}

Status SaveRun(store::ObjectStore& store, const std::string& namespace_, const Run& run) {
  std::string run_id = run.info.value("run_id", "");
  api::Json metadata = {{"name", run_id}, {"namespace", namespace_}};
  if (!run.owner_ref.is_null()) {
    // Deleted with its job or trial, whatever the kind, by the engine's
    // garbage collector (controller/owned.h).
    metadata["ownerReferences"] = api::Json::array({run.owner_ref});
  }
  api::Json object = {{"apiVersion", "trainyard.dev/v1"},
                      {"kind", kRunKind},
                      {"metadata", std::move(metadata)},
                      {"spec",
                       {{"info", run.info},
                        {"params", run.params},
                        {"tags", run.tags},
                        {"metricsLog", run.metrics_log},
                        {"ownerUid", run.owner_uid}}}};
  if (!run.stored) return store.Create(std::move(object)).status();
  ASSIGN_OR_RETURN(api::Json kept, store.Get({std::string(kRunKind), namespace_, run_id}));
  object["metadata"]["resourceVersion"] = kept["metadata"]["resourceVersion"];
  object["metadata"]["uid"] = kept["metadata"]["uid"];
  object["metadata"]["creationTimestamp"] = kept["metadata"]["creationTimestamp"];
  return store.Update(std::move(object)).status();
}

api::Json RunJson(const Run& run, const std::vector<store::ObservationRow>& metrics) {
  // The latest value of each metric: at its highest step, then time.
  struct Latest {
    int64_t step = 0;
    int64_t time_us = 0;
    const store::ObservationRow* row = nullptr;
  };
  std::map<std::string, Latest> latest;
  std::map<std::string, int64_t> seen;  // a value's place, standing for a step not given
  for (const store::ObservationRow& row : metrics) {
    int64_t place = seen[row.metric]++;
    int64_t step = row.step != store::kNoStep ? row.step : place;
    Latest& l = latest[row.metric];
    if (l.row == nullptr || std::pair(step, row.time_us) >= std::pair(l.step, l.time_us)) {
      l = {step, row.time_us, &row};
    }
  }
  api::Json values = api::Json::array();
  for (const auto& [key, l] : latest) {
    values.push_back({{"key", key},
                      {"value", MetricJson(l.row->value)},
                      {"timestamp", l.time_us / 1000},
                      {"step", l.step}});
  }
  // What the job was run with, unless its code logged the same key itself.
  api::Json params = run.params;
  for (const api::Json& derived : run.derived_params) {
    bool logged = std::any_of(run.params.begin(), run.params.end(), [&](const api::Json& p) {
      return p.value("key", "") == derived.value("key", "");
    });
    if (!logged) params.push_back(derived);
  }
  return {
      {"info", run.info},
      {"data", {{"metrics", std::move(values)}, {"params", std::move(params)}, {"tags", run.tags}}},
      {"inputs", api::Json::object()}};
}

namespace {

api::Json DefaultExperiment() {
  return {{"experiment_id", kDefaultExperiment},
          {"name", "Default"},
          {"artifact_location", "mlflow-artifacts:/0"},
          {"lifecycle_stage", "active"},
          {"creation_time", 0},
          {"last_update_time", 0},
          {"tags", api::Json::array()}};
}

}  // namespace

Result<api::Json> LoadExperiment(const store::ObjectReader& store, const std::string& namespace_,
                                 const std::string& id) {
  if (id == kDefaultExperiment) return DefaultExperiment();
  Result<api::Json> kept = store.Get({std::string(kExperimentKind), namespace_, id});
  if (kept.status().code() == StatusCode::kNotFound) {
    return NotFoundError(fmt::format("No Experiment with id={} exists", id));
  }
  RETURN_IF_ERROR(kept.status());
  return (*kept)["spec"];
}

Result<std::vector<api::Json>> ListExperiments(const store::ObjectReader& store,
                                               const std::string& namespace_) {
  std::vector<api::Json> all = {DefaultExperiment()};
  RETURN_IF_ERROR(store.Scan(std::string(kExperimentKind), namespace_,
                             [&](const api::Json& e) { all.push_back(e["spec"]); }));
  return all;
}

Status CheckKey(const std::string& key, const std::string& field) {
  if (key.empty()) return InvalidArgumentError(fmt::format("{}: a key may not be empty", field));
  if (key.size() > kMaxKey) {
    return InvalidArgumentError(
        fmt::format("{}: the key {:?} is over {} characters", field, key.substr(0, 40), kMaxKey));
  }
  // MLflow's rule: letters, digits, and _ - . space / (and : in newer
  // versions); never a path that climbs.
  for (char c : key) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
              c == '.' || c == ' ' || c == '/' || c == ':';
    if (!ok) {
      return InvalidArgumentError(fmt::format(
          "{}: invalid key {:?}: keys may hold only letters, digits, and _ - . space / :", field,
          key));
    }
  }
  if (key.find("..") != std::string::npos || key.front() == '/') {
    return InvalidArgumentError(
        fmt::format("{}: invalid key {:?}: not a relative path", field, key));
  }
  return OkStatus();
}

Result<api::Json> CheckedPairs(const api::Json& doc, const std::string& field, size_t max_value) {
  api::Json pairs = api::Json::array();
  auto it = doc.find(field);
  if (it == doc.end() || it->is_null()) return pairs;
  if (!it->is_array()) return InvalidArgumentError(fmt::format("{}: must be a list", field));
  for (size_t i = 0; i < it->size(); ++i) {
    const api::Json& pair = (*it)[i];
    std::string at = fmt::format("{}[{}]", field, i);
    if (!pair.is_object() || !pair.value("key", api::Json()).is_string()) {
      return InvalidArgumentError(fmt::format("{}: must be {{key, value}}", at));
    }
    std::string key = pair["key"].get<std::string>();
    RETURN_IF_ERROR(CheckKey(key, at + ".key"));
    api::Json value = pair.value("value", api::Json(""));
    if (value.is_number()) value = value.dump();  // written unquoted
    if (!value.is_string()) return InvalidArgumentError(at + ".value: must be a string");
    if (value.get_ref<const std::string&>().size() > max_value) {
      return InvalidArgumentError(
          fmt::format("{}.value: over {} characters (the most MLflow keeps)", at, max_value));
    }
    pairs.push_back({{"key", std::move(key)}, {"value", std::move(value)}});
  }
  return pairs;
}

Status RefuseQueryLanguage(const Args& args) {
  for (const char* field : {"filter", "order_by"}) {
    auto it = args.doc().find(field);
    bool given = it != args.doc().end() && !it->is_null() &&
                 !(it->is_string() && it->get_ref<const std::string&>().empty()) &&
                 !(it->is_array() && it->empty());
    if (given) {
      return InvalidArgumentError(fmt::format(
          "{}: this server does not read MLflow's search language; search without it and pick "
          "from the answer",
          field));
    }
  }
  return OkStatus();
}

bool InView(const std::string& view, const std::string& stage) {
  if (view == "ALL") return true;
  if (view == "DELETED_ONLY") return stage == "deleted";
  return stage != "deleted";
}

Result<api::Json> Paged(const Args& args, std::vector<api::Json> items, const std::string& field) {
  ASSIGN_OR_RETURN(std::optional<int64_t> max, args.Int("max_results"));
  int64_t limit = max.value_or(1000);
  if (limit < 1 || limit > 50000) {
    return InvalidArgumentError(
        fmt::format("max_results: {} is out of range: from 1 to 50000", limit));
  }
  int64_t from = 0;
  std::string token = args.Optional("page_token");
  if (!token.empty()) {
    std::optional<std::string> text = Base64Decode(token);
    std::optional<int64_t> offset = text ? ParseInt(*text) : std::nullopt;
    if (!offset || *offset < 0) {
      return InvalidArgumentError("page_token: not a token this server gave");
    }
    from = *offset;
  }
  int64_t n = static_cast<int64_t>(items.size());
  from = std::min(from, n);  // a token past the end: an empty page
  api::Json page = api::Json::array();
  for (int64_t i = from; i < n && i < from + limit; ++i) page.push_back(std::move(items[i]));
  api::Json answer = {{field, std::move(page)}};
  if (from + limit < n) answer["next_page_token"] = Base64Encode(std::to_string(from + limit));
  return answer;
}

}  // namespace trainyard::server::mlflow
