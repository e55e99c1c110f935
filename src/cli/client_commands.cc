#include "cli/client_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "api/json.h"
#include "api/object.h"
#include "api/well_known.h"
#include "api/yaml.h"
#include "cli/client_session.h"
#include "cli/describe_katib.h"
#include "cli/manifests.h"
#include "cli/metrics_view.h"
#include "common/strings.h"
#include "server/resources.h"

namespace trainyard::cli {
namespace {

// "pytorchjob.kubeflow.org/mnist", as kubectl names what it acted on.
std::string Named(const server::Resource& r, const std::string& name) {
  return fmt::format("{}{}/{}", AsciiLower(r.kind), r.group.empty() ? "" : "." + r.group, name);
}

std::string Cell(const api::Json& cell) {
  return cell.is_string() ? cell.get<std::string>() : cell.dump();
}

// A Table as kubectl prints it: upper-case headers, columns three spaces apart.
void PrintTable(const api::Json& table, bool wide, bool namespaces, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  std::vector<size_t> shown;
  if (namespaces) header.push_back("NAMESPACE");
  const api::Json columns = api::ArrayAt(table, "columnDefinitions");
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!wide && api::IntAt(columns[i], "priority") > 0) continue;
    shown.push_back(i);
    header.push_back(AsciiUpper(api::StringAt(columns[i], "name")));
  }
  for (const api::Json& row : api::ArrayAt(table, "rows")) {
    std::vector<std::string> line;
    if (namespaces) {
      line.push_back(row.contains("object") ? api::StringAt(row["object"]["metadata"], "namespace")
                                            : "");
    }
    const api::Json cells = api::ArrayAt(row, "cells");
    for (size_t i : shown) line.push_back(i < cells.size() ? Cell(cells[i]) : "");
    rows.push_back(std::move(line));
  }
  if (rows.empty()) return;
  std::vector<size_t> width(header.size(), 0);
  rows.insert(rows.begin(), header);
  for (const auto& line : rows) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  for (const auto& line : rows) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
      text += i + 1 == line.size() ? line[i] : fmt::format("{:<{}}   ", line[i], width[i]);
    }
    out << text << '\n';
  }
}

void PrintObject(const api::Json& object, const std::string& output, std::ostream& out) {
  if (output == "json") {
    out << object.dump(2) << '\n';
  } else {
    out << api::ToYaml(object);
  }
}

// The events about one object, as kubectl describe asks for them.
std::string EventsAbout(const server::Resource& r, const std::string& ns, const std::string& name) {
  return CollectionPath(*api::ResourceTypeOfKind("Event"), ns) +
         fmt::format("?fieldSelector=involvedObject.kind%3D{},involvedObject.name%3D{}", r.kind,
                     name);
}

// A section of describe: the title, then the table indented, if it has rows.
bool PrintSection(const std::string& title, const Result<ApiAnswer>& table) {
  if (!table.ok() || !table->ok() || api::ArrayAt(table->body, "rows").empty()) return false;
  std::cout << title << ":\n";
  std::ostringstream text;
  PrintTable(table->body, false, false, text);
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) std::cout << "  " << line << '\n';
  return true;
}

// Whether applying `manifest` left the object as it was: the same spec,
// and the labels and annotations it gives already there. Not by
// resourceVersion, which a controller's write between the two requests
// (a status, its own annotation) moves too.
bool SameAsApplied(const api::Json& manifest, const api::Json& before, const api::Json& after) {
  if (api::ObjectAt(before, {"spec"}) != api::ObjectAt(after, {"spec"})) return false;
  for (const char* map : {"labels", "annotations"}) {
    for (const auto& [key, value] : api::ObjectAt(manifest, {"metadata", map}).items()) {
      const api::Json& had = api::ObjectAt(before, {"metadata", map});
      if (!had.contains(key) || had[key] != value) return false;
    }
  }
  return true;
}

}  // namespace

int RunApply(const ClientCommand& command, const std::vector<std::string>& paths) {
  LoadedManifests loaded = LoadManifests(paths, std::cerr);
  bool valid = loaded.unreadable == 0;
  for (const LoadedObject& object : loaded.objects) {
    if (!object.checked.result.ok()) {
      PrintErrors(object, std::cerr);
      valid = false;
    }
  }
  if (!valid) return 1;  // nothing is sent when anything is wrong
  Result<std::unique_ptr<ApiClient>> client = Connect(command);
  if (!client.ok()) return Fail(client.status().message());
  int failed = 0;
  for (const LoadedObject& object : loaded.objects) {
    api::Json doc = object.document;
    const server::Resource* r = api::ResourceTypeOf(doc);
    if (r == nullptr)
      return Fail(fmt::format("{}: the server does not serve {}", object.where,
                              api::StringAt(doc, "kind")));
    std::string ns = api::StringAt(doc["metadata"], "namespace");
    if (ns.empty()) ns = NamespaceOf(command);
    std::string name = api::StringAt(doc["metadata"], "name");
    Result<ApiAnswer> created =
        (*client)->Send("POST", CollectionPath(*r, ns) + "?fieldValidation=Strict", doc);
    if (!created.ok()) return Fail(created.status().message());
    std::string verb = "created";
    if (created->code == 409 && api::StringAt(created->body, "reason") == "AlreadyExists") {
      // There already: merge the manifest into it, so that what others
      // keep there (the controller's annotations, the status) stays.
      Result<ApiAnswer> current = (*client)->Get(ObjectPath(*r, ns, name));
      if (!current.ok()) return Fail(current.status().message());
      created = (*client)->Send("PATCH", ObjectPath(*r, ns, name) + "?fieldValidation=Strict", doc,
                                "application/merge-patch+json");
      if (!created.ok()) return Fail(created.status().message());
      verb = created->ok() && current->ok() && SameAsApplied(doc, current->body, created->body)
                 ? "unchanged"
                 : "configured";
    }
    if (!created->ok()) {
      std::cerr << fmt::format("error: {}: {}\n", object.where, created->Error());
      ++failed;
      continue;
    }
    std::cout << Named(*r, name) << ' ' << verb << '\n';
  }
  return failed == 0 ? 0 : 1;
}

int RunGet(const ClientCommand& command, const std::string& kind,
           const std::vector<std::string>& names) {
  Result<Session> session = OpenSession(command, kind);
  if (!session.ok()) return Fail(session.status().message());
  const server::Resource* r = session->resource;
  ApiClient& api = *session->client;
  bool table = command.output.empty() || command.output == "wide";
  std::string ns = command.all_namespaces ? "" : NamespaceOf(command);
  std::vector<std::string> paths;
  if (names.empty()) paths.push_back(CollectionPath(*r, ns));
  for (const std::string& name : names) paths.push_back(ObjectPath(*r, ns, name));
  int status = 0;
  for (const std::string& path : paths) {
    Result<ApiAnswer> answer = api.Get(path, table);
    if (!answer.ok()) return Fail(answer.status().message());
    if (!answer->ok()) {
      status = Fail(answer->Error());
      continue;
    }
    if (!table) {
      PrintObject(answer->body, command.output, std::cout);
    } else if (api::ArrayAt(answer->body, "rows").empty()) {
      std::cerr << (ns.empty() ? "No resources found\n"
                               : fmt::format("No resources found in {} namespace.\n", ns));
    } else {
      PrintTable(answer->body, command.output == "wide", command.all_namespaces && r->namespaced,
                 std::cout);
    }
  }
  return status;
}

namespace {

// What `describe` shows of a kind beyond the generic, as kubectl has a
// describer per resource: Katib's experiments and trials.
using Describer = void (*)(ApiClient& api, const server::Resource& r, const std::string& ns,
                           const std::string& name, const api::Json& object);

void DescribeExperiment(ApiClient& api, const server::Resource&, const std::string& ns,
                        const std::string& name, const api::Json& object) {
  PrintKatibDescription(object, std::cout);
  PrintSection("Trials", api.Get(CollectionPath(*api::ResourceTypeOfKind("Trial"), ns) +
                                     "?labelSelector=katib.kubeflow.org%2Fexperiment%3D" + name,
                                 true));
}

void DescribeTrial(ApiClient& api, const server::Resource& r, const std::string& ns,
                   const std::string& name, const api::Json& object) {
  PrintKatibDescription(object, std::cout);
  Result<ApiAnswer> log = api.Get(ObjectPath(r, ns, name) + "/observations");
  if (log.ok() && log->ok()) PrintObservationLog(log->body, 20, std::cout);
}

// By qualified resource name; nullptr for the generic describer.
const Describer* DescriberOf(const server::Resource& r) {
  static const std::map<std::string, Describer, std::less<>> kDescribers = {
      {"experiments.kubeflow.org", DescribeExperiment}, {"trials.kubeflow.org", DescribeTrial}};
  auto it = kDescribers.find(r.Qualified());
  return it == kDescribers.end() ? nullptr : &it->second;
}

}  // namespace

int RunDescribe(const ClientCommand& command, const std::string& kind, const std::string& name) {
  Result<Session> session = OpenSession(command, kind);
  if (!session.ok()) return Fail(session.status().message());
  const server::Resource* r = session->resource;
  ApiClient& api = *session->client;
  std::string ns = NamespaceOf(command);
  Result<ApiAnswer> object = api.Get(ObjectPath(*r, ns, name));
  if (!object.ok()) return Fail(object.status().message());
  if (!object->ok()) return Fail(object->Error());
  const api::Json& o = object->body;
  if (command.output == "yaml" || command.output == "json") {
    PrintObject(o, command.output, std::cout);
    return 0;
  }
  std::cout << fmt::format("Name:       {}\n", name);
  if (r->namespaced) std::cout << fmt::format("Namespace:  {}\n", ns);
  std::cout << fmt::format("Kind:       {}\nCreated:    {}\n", r->kind,
                           api::StringAt(o["metadata"], "creationTimestamp"));
  if (const Describer* describe = DescriberOf(*r)) {
    (*describe)(api, *r, ns, name, o);
    if (!PrintSection("Events", api.Get(EventsAbout(*r, ns, name), true))) {
      std::cout << "Events: <none>\n";
    }
    return 0;
  }
  if (r->group != "batch" && r->group != "kubeflow.org") {
    // Queues, quotas, classes: their fields and status, as YAML.
    for (const auto& [key, value] : o.items()) {
      if (key == "apiVersion" || key == "kind" || key == "metadata" || value.empty()) continue;
      std::cout << api::ToYaml(api::Json{{key, value}});
    }
    if (!PrintSection("Events", api.Get(EventsAbout(*r, ns, name), true))) {
      std::cout << "Events: <none>\n";
    }
    return 0;
  }
  const api::Json& status = api::ObjectAt(o, "status");
  const api::Json conditions = api::ArrayAt(status, "conditions");
  if (!conditions.empty()) {
    std::cout << "Conditions:\n";
    for (const api::Json& c : conditions) {
      std::cout << fmt::format("  {:<11} {:<6} {}: {}\n", api::StringAt(c, "type"),
                               api::StringAt(c, "status"), api::StringAt(c, "reason"),
                               api::StringAt(c, "message"));
    }
  }
  // The replicas: pods labelled with the job's name.
  std::string label(r->group == "batch" ? api::kBatchJobNameLabel : api::kLabelJobName);
  Result<ApiAnswer> pods = api.Get(CollectionPath(*api::ResourceTypeOfKind("Pod"), ns) +
                                       "?labelSelector=" + label + "%3D" + name,
                                   true);
  PrintSection("Replicas", pods);
  if (!PrintSection("Events", api.Get(EventsAbout(*r, ns, name), true))) {
    std::cout << "Events: <none>\n";
  }
  return 0;
}

int RunMetrics(const ClientCommand& command, const std::string& kind, const std::string& name,
               const std::string& metric) {
  Result<Session> session = OpenSession(command, kind);
  if (!session.ok()) return Fail(session.status().message());
  Result<ApiAnswer> log = session->client->Get(
      ObjectPath(*session->resource, NamespaceOf(command), name) + "/observations");
  if (!log.ok()) return Fail(log.status().message());
  if (!log->ok()) return Fail(log->Error());
  if (!metric.empty() && !HasMetric(log->body, metric)) {
    std::cerr << MetricsView(log->body, metric);  // which there are
    return 1;
  }
  std::cout << MetricsView(log->body, metric);
  return 0;
}

int RunLogs(const ClientCommand& command, const std::string& pod, const LogsOptions& options) {
  Result<std::unique_ptr<ApiClient>> client = Connect(command);
  if (!client.ok()) return Fail(client.status().message());
  std::string path =
      ObjectPath(*api::ResourceTypeOfKind("Pod"), NamespaceOf(command), pod) + "/log?";
  if (options.follow) path += "follow=true&";
  if (options.previous) path += "previous=true&";
  if (options.tail) path += fmt::format("tailLines={}&", *options.tail);
  if (!options.container.empty()) path += "container=" + options.container;
  Status streamed = (*client)->Stream(path, [](std::string_view data) {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    return static_cast<bool>(std::cout);
  });
  return streamed.ok() ? 0 : Fail(streamed.message());
}

namespace {

// Sends one request per name; prints `done(name)` for each that worked and
// the server's word for each that did not. 1 if any failed.
int ForEachName(const std::vector<std::string>& names,
                const std::function<Result<ApiAnswer>(const std::string&)>& send,
                const std::function<std::string(const std::string&)>& done) {
  int status = 0;
  for (const std::string& name : names) {
    Result<ApiAnswer> answer = send(name);
    if (!answer.ok()) return Fail(answer.status().message());
    if (!answer->ok()) {
      status = Fail(answer->Error());
      continue;
    }
    std::cout << done(name) << '\n';
  }
  return status;
}

}  // namespace

int RunDelete(const ClientCommand& command, const std::string& kind,
              const std::vector<std::string>& names) {
  Result<Session> session = OpenSession(command, kind);
  if (!session.ok()) return Fail(session.status().message());
  const server::Resource& r = *session->resource;
  ApiClient& api = *session->client;
  return ForEachName(
      names,
      [&](const std::string& name) {
        return api.Send("DELETE", ObjectPath(r, NamespaceOf(command), name), nullptr);
      },
      [&](const std::string& name) {
        // kubectl's words: `pytorchjob.kubeflow.org "mnist" deleted`.
        std::string named = Named(r, name);
        return fmt::format("{} \"{}\" deleted", named.substr(0, named.rfind('/')), name);
      });
}

int RunSuspend(const ClientCommand& command, const std::string& kind,
               const std::vector<std::string>& names, bool suspend) {
  Result<Session> session = OpenSession(command, kind);
  if (!session.ok()) return Fail(session.status().message());
  const server::Resource& r = *session->resource;
  if (r.group != "kubeflow.org" && r.group != "batch") {
    return Fail(fmt::format("{:?} is not a kind of job that can be suspended", kind));
  }
  ApiClient& api = *session->client;
  api::Json patch = r.group == "batch"
                        ? api::Json{{"spec", {{"suspend", suspend}}}}
                        : api::Json{{"spec", {{"runPolicy", {{"suspend", suspend}}}}}};
  return ForEachName(
      names,
      [&](const std::string& name) {
        return api.Send("PATCH", ObjectPath(r, NamespaceOf(command), name), patch,
                        "application/merge-patch+json");
      },
      [&](const std::string& name) {
        return Named(r, name) + (suspend ? " suspended" : " resumed");
      });
}

int RunEvents(const ClientCommand& command, const std::string& about) {
  Result<std::unique_ptr<ApiClient>> client = Connect(command);
  if (!client.ok()) return Fail(client.status().message());
  std::string ns = command.all_namespaces ? "" : NamespaceOf(command);
  std::string path = CollectionPath(*api::ResourceTypeOfKind("Event"), ns);
  if (!about.empty()) {
    size_t slash = about.find('/');
    const server::Resource* r =
        slash == std::string::npos ? nullptr : api::ResolveResourceType(about.substr(0, slash));
    if (r == nullptr)
      return Fail(fmt::format("--for wants KIND/NAME, as pytorchjob/mnist (not {:?})", about));
    path = EventsAbout(*r, ns, about.substr(slash + 1));
  }
  Result<ApiAnswer> answer = (*client)->Get(path, true);
  if (!answer.ok()) return Fail(answer.status().message());
  if (!answer->ok()) return Fail(answer->Error());
  if (api::ArrayAt(answer->body, "rows").empty()) {
    std::cerr << "No events found.\n";
    return 0;
  }
  PrintTable(answer->body, false, command.all_namespaces, std::cout);
  return 0;
}

}  // namespace trainyard::cli
