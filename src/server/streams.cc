#include "server/streams.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <charconv>
#include <cstdio>
#include <random>
#include <thread>

#include "api/json.h"
#include "api/registry.h"
#include "server/cri_log.h"
#include "server/handler_internal.h"
#include "server/table.h"
#include "tune/metrics.h"

namespace trainyard::server {

namespace {

const char* TypeName(store::EventType type) {
  switch (type) {
    case store::EventType::kAdded:
      return "ADDED";
    case store::EventType::kModified:
      return "MODIFIED";
    case store::EventType::kDeleted:
      return "DELETED";
  }
  return "ERROR";
}

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// Reads [offset, offset + n) of a file; what exists of it.
std::string ReadRange(const std::string& path, int64_t offset, int64_t n) {
  std::string out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  if (std::fseek(f, offset, SEEK_SET) == 0) {
    out.resize(static_cast<size_t>(n));
    out.resize(std::fread(out.data(), 1, out.size(), f));
  }
  std::fclose(f);
  return out;
}

}  // namespace

WatchStream::~WatchStream() {
  if (id_) store_.StopWatch(*id_);
}

bool WatchStream::Wanted(const api::Json& object) const {
  const ApiTarget& t = options_.target;
  if (api::StoreKindOf(object) != t.resource->store_kind) return false;
  if (!t.namespace_.empty() && api::StringAt(object, {"metadata", "namespace"}) != t.namespace_)
    return false;
  if (!t.name.empty() && api::StringAt(object, {"metadata", "name"}) != t.name) return false;
  return options_.labels.Matches(object) && options_.fields.Matches(object);
}

Status WatchStream::Start(const std::string& resource_version) {
  int64_t since = 0;
  if (!resource_version.empty()) {
    // Digits only, as Go's ParseUint reads it: "-5" and "12abc" are refused.
    bool digits = resource_version.size() <= 18 &&
                  resource_version.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      return InvalidArgumentError(
          fmt::format("invalid resourceVersion {:?}: want a resourceVersion the server returned",
                      resource_version));
    }
    since = std::stoll(resource_version);
    // kube-apiserver waits briefly for a version it has not reached, then
    // answers that it is too large; one that lies ahead here was never
    // issued (or the client saw another server's), so it answers at once.
    if (int64_t current = store_.CurrentResourceVersion(); since > current) {
      return Status(StatusCode::kDeadlineExceeded,
                    fmt::format("Too large resource version: {}, current: {}", since, current));
    }
  }
  auto push = [this](std::span<const store::SharedWatchEvent> batch) {
    MutexLock lock(mu_);
    bool woken = !events_.empty();  // a wake-up is on its way already
    for (const store::SharedWatchEvent& e : batch) {
      if (Wanted(e->object)) events_.push_back(e);
    }
    if (!woken && !events_.empty()) ready_.NotifyOne();
  };
  Result<store::WatchId> id = store_.WatchCommitted(since, push);
  if (!id.ok()) {
    if (id.status().code() != StatusCode::kOutOfRange) return id.status();
    // Kubernetes ends such a watch with an ERROR event holding a 410.
    error_ = api::Json{{"type", "ERROR"}, {"object", ApiErrorOf(id.status()).body}}.dump() + "\n";
    return OkStatus();
  }
  id_ = *id;
  if (since > 0) {
    // The client has seen `since`: what an open group commits up to it
    // is not sent again.
    MutexLock lock(mu_);
    since_ = since;
    return OkStatus();
  }
  // Now what there is, as ADDED events; what the watch queued meanwhile
  // and the list already shows is skipped.
  const ApiTarget& t = options_.target;
  std::deque<store::SharedWatchEvent> initial;
  // Only what the selectors' equalities select is read (store indexes).
  store::ListQuery query{.kind = t.resource->store_kind,
                         .namespace_ = t.namespace_,
                         .labels = options_.labels.Equalities(),
                         .fields = options_.fields.Equalities()};
  if (!t.name.empty()) query.fields.emplace_back("metadata.name", t.name);
  ASSIGN_OR_RETURN(int64_t listed_at, store_.ScanWhere(query, [&](const api::Json& object) {
    if (Wanted(object)) {
      initial.push_back(std::make_shared<const store::WatchEvent>(
          store::WatchEvent{store::EventType::kAdded, 0, object, nullptr}));
    }
    return true;
  }));
  MutexLock lock(mu_);
  since_ = listed_at;
  std::erase_if(events_,
                [&](const store::SharedWatchEvent& e) { return e->resource_version <= listed_at; });
  events_.insert(events_.begin(), std::make_move_iterator(initial.begin()),
                 std::make_move_iterator(initial.end()));
  return OkStatus();
}

std::string WatchStream::Render(const store::WatchEvent& event) {
  api::Json object;
  if (options_.table) {
    std::string rv = api::StringAt(event.object, {"metadata", "resourceVersion"});
    object = MakeTable(*options_.target.resource, {&event.object}, rv,
                       {.now = options_.clock->Now(),
                        .with_columns = !sent_columns_,
                        .include_object = options_.include_object});
    sent_columns_ = true;
  }
  if (!options_.table && event.text) {
    // The store's own serialisation, shared by every watcher.
    return fmt::format("{{\"type\":\"{}\",\"object\":{}}}\n", TypeName(event.type), *event.text);
  }
  return api::Json{{"type", TypeName(event.type)},
                   {"object", options_.table ? object : event.object}}
             .dump() +
         "\n";
}

bool WatchStream::Next(std::string& out, Duration wait) {
  if (!error_.empty()) {
    out += error_;
    return false;
  }
  std::deque<store::SharedWatchEvent> batch;
  int64_t since = 0;
  auto now = std::chrono::steady_clock::now();
  if (options_.end_at && *options_.end_at - now < wait) {
    wait = std::max(Duration::zero(), std::chrono::duration_cast<Duration>(*options_.end_at - now));
  }
  {
    MutexLock lock(mu_);
    ready_.WaitFor(mu_, wait, [&]() TRAINYARD_REQUIRES(mu_) { return !events_.empty(); });
    batch.swap(events_);
    since = since_;
  }
  for (const store::SharedWatchEvent& e : batch) {
    // Events from before a list the client has seen are skipped (the
    // initial ADDED events carry 0 and always go).
    if (e->resource_version != 0 && e->resource_version <= since) continue;
    out += Render(*e);
  }
  return !options_.end_at || std::chrono::steady_clock::now() < *options_.end_at;
}

void LogStream::SeekTail() {
  if (!options_.tail_lines) return;
  int64_t end = run_.end >= 0 ? run_.end : FileSize(run_.path);
  int64_t want = *options_.tail_lines;
  int64_t pos = end;
  int64_t newlines = 0;
  constexpr int64_t kBlock = 64 * 1024;
  // Backwards, a block at a time, until `want` lines (the last may lack its
  // newline) lie between pos and end.
  while (pos > run_.begin) {
    int64_t start = std::max(run_.begin, pos - kBlock);
    std::string block = ReadRange(run_.path, start, pos - start);
    for (int64_t i = static_cast<int64_t>(block.size()) - 1; i >= 0; --i) {
      if (block[static_cast<size_t>(i)] != '\n' || start + i == end - 1) continue;
      if (++newlines == want) {
        run_.begin = start + i + 1;
        return;
      }
    }
    pos = start;
  }
  if (want == 0) run_.begin = end;
}

bool LogStream::RunOver() const {
  Result<api::Json> pod = backend_.store().Get({"Pod", options_.namespace_, options_.pod});
  if (!pod.ok()) return true;
  const api::Json& status = api::ObjectAt(*pod, "status");
  std::string phase = api::StringAt(status, "phase");
  if (phase == "Succeeded" || phase == "Failed") return true;
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    for (const api::Json& c : api::ArrayRefAt(status, {list})) {
      if (api::StringAt(c, {"name"}) != options_.container) continue;
      return api::IntAt(c, {"restartCount"}) != restarts_ ||
             !api::ObjectAt(c, {"state"}).contains("running");
    }
  }
  return false;
}

void LogStream::ReadCri(int64_t from, int64_t end, bool over, std::string& out) {
  constexpr int64_t kChunk = 256 * 1024;
  std::string data = ReadRange(run_.path, from, std::min(end - from, kChunk));
  size_t used =
      RenderCriLines(data, {.timestamps = options_.timestamps, .since_ns = options_.since_ns}, out);
  // The unended last line of a run that is over is a line too.
  if (used == 0 && over) {
    data.push_back('\n');
    used = RenderCriLines(data, {.timestamps = options_.timestamps, .since_ns = options_.since_ns},
                          out) -
           1;
  }
  // A line longer than a chunk (the runtime splits lines far shorter) is
  // shown as it is.
  if (used == 0 && static_cast<int64_t>(data.size()) == kChunk) {
    out += data;
    used = data.size();
  }
  sent_ += static_cast<int64_t>(used);
}

bool LogStream::Next(std::string& out, Duration wait) {
  constexpr int64_t kChunk = 256 * 1024;
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    bool over = options_.follow && RunOver();  // before reading: nothing written after is lost
    int64_t end = run_.end >= 0 ? run_.end : FileSize(run_.path);
    int64_t read_before = sent_;
    int64_t from = run_.begin + sent_;
    std::string data;
    if (run_.cri && end > from) {
      ReadCri(from, end, over || !options_.follow, data);
    } else if (end > from) {
      data = ReadRange(run_.path, from, std::min(end - from, kChunk));
      sent_ += static_cast<int64_t>(data.size());
    }
    if (options_.limit_bytes) {
      data.resize(std::min<size_t>(data.size(), *options_.limit_bytes - written_));
    }
    written_ += static_cast<int64_t>(data.size());
    out += data;
    if (options_.limit_bytes && written_ >= *options_.limit_bytes) return false;
    if (!data.empty()) return true;
    if (sent_ > read_before && run_.begin + sent_ < end) continue;  // all left out: read on
    if (!options_.follow || over || run_.end >= 0) return false;
    if (std::chrono::steady_clock::now() >= deadline) return true;
    // The file grows by the replica's writes: look again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

namespace {

// kube-apiserver's answer to a watch from a resourceVersion it has not
// reached: a 504 whose cause tells clients (client-go's reflector) to
// list again.
ApiError TooLargeVersion(const Status& status) {
  ApiError error = MakeApiError(504, "Timeout", status.message());
  error.body["details"] = {
      {"causes",
       {{{"reason", "ResourceVersionTooLarge"}, {"message", "Too large resource version"}}}},
      {"retryAfterSeconds", 1}};
  return error;
}

std::optional<int64_t> IntParam(const ApiRequest& request, const std::string& name) {
  std::string text = request.Param(name);
  if (text.empty()) return std::nullopt;
  // As Go's strconv.ParseInt reads it: an optional '+', then digits only.
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  int64_t value = -1;
  auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc() && stop == digits.data() + digits.size() && value >= 0) return value;
  return -1;
}

}  // namespace

ApiResponse ApiHandler::Watch(const ApiTarget& target, const ApiRequest& request) {
  Result<Selector> labels = Selector::ParseLabels(request.Param("labelSelector"));
  if (!labels.ok())
    return ErrorResponse(MakeApiError(400, "BadRequest", labels.status().message()));
  Result<Selector> fields = Selector::ParseFields(request.Param("fieldSelector"));
  if (!fields.ok())
    return ErrorResponse(MakeApiError(400, "BadRequest", fields.status().message()));
  if (target.resource->strategy.kubelet_registered && !api_only_) {
    return ErrorResponse(MakeApiError(405, "MethodNotAllowed", "nodes cannot be watched yet"));
  }
  std::string include = request.Param("includeObject");
  std::optional<std::chrono::steady_clock::time_point> end_at;
  if (std::optional<int64_t> timeout = IntParam(request, "timeoutSeconds");
      timeout && *timeout > 0) {
    end_at = std::chrono::steady_clock::now() + std::chrono::seconds(*timeout);
  } else {
    // As Kubernetes does, a watch ends after 30 to 60 minutes, and clients
    // watch again from where they were. (A client that hangs up ends its
    // watch at once: http_server.cc watches its connection.)
    static thread_local std::mt19937 gen{std::random_device{}()};
    end_at = std::chrono::steady_clock::now() +
             std::chrono::seconds(1800 + static_cast<int64_t>(gen() % 1800));
  }
  auto stream = std::make_unique<WatchStream>(
      backend_.store(), WatchOptions{.target = target,
                                     .labels = std::move(*labels),
                                     .fields = std::move(*fields),
                                     .table = WantsTable(request.accept),
                                     .include_object = include.empty() ? "Metadata" : include,
                                     .clock = &clock_,
                                     .end_at = end_at});
  if (Status s = stream->Start(request.Param("resourceVersion")); !s.ok()) {
    if (s.code() == StatusCode::kDeadlineExceeded) return ErrorResponse(TooLargeVersion(s));
    return ErrorResponse(ApiErrorOf(s));
  }
  ApiResponse response;
  response.stream = std::move(stream);
  return response;
}

namespace {

// The query of a pods/log request, checked as kube-apiserver checks it.
Result<LogOptions> LogOptionsOf(const ApiRequest& request, const Clock& clock) {
  LogOptions options{.previous = request.Flag("previous"),
                     .follow = request.Flag("follow"),
                     .tail_lines = IntParam(request, "tailLines"),
                     .limit_bytes = IntParam(request, "limitBytes"),
                     .timestamps = request.Flag("timestamps")};
  if (options.tail_lines == -1) return InvalidArgumentError("tailLines must be 0 or more");
  if (options.limit_bytes == -1 || options.limit_bytes == 0) {
    return InvalidArgumentError("limitBytes must be greater than 0");
  }
  std::string since_time = request.Param("sinceTime");
  std::optional<int64_t> since_seconds = IntParam(request, "sinceSeconds");
  if (!since_time.empty() && since_seconds) {
    return InvalidArgumentError("at most one of sinceTime or sinceSeconds may be specified");
  }
  if (!since_time.empty()) {
    std::optional<int64_t> ns = tune::ParseRfc3339Nanos(since_time);
    if (!ns) return InvalidArgumentError(fmt::format("sinceTime {:?} is not RFC 3339", since_time));
    options.since_ns = *ns;
  }
  if (since_seconds) {
    if (*since_seconds < 1) return InvalidArgumentError("sinceSeconds must be greater than 0");
    options.since_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           clock.Now().time_since_epoch() - std::chrono::seconds(*since_seconds))
                           .count();
  }
  if (options.previous) options.follow = false;
  return options;
}

}  // namespace

Result<std::string> internal::RequestedContainer(const api::Json& pod, const ApiRequest& request) {
  const api::Json& containers = api::ArrayRefAt(pod, {"spec", "containers"});
  if (containers.empty()) return InvalidArgumentError("the pod has no containers");
  std::string container = request.Param("container");
  if (container.empty()) container = api::StringAt(containers[0], {"name"});
  for (const char* list : {"initContainers", "containers"}) {
    for (const api::Json& c : api::ArrayRefAt(pod, {"spec", list})) {
      if (api::StringAt(c, {"name"}) == container) return container;
    }
  }
  return InvalidArgumentError(fmt::format("container {} is not valid for pod {}", container,
                                          api::StringAt(pod, {"metadata", "name"})));
}

const api::Json* internal::ContainerStatusOf(const api::Json& pod, const std::string& container) {
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    for (const api::Json& c : api::ArrayRefAt(pod, {"status", list})) {
      if (api::StringAt(c, {"name"}) == container) return &c;
    }
  }
  return nullptr;
}

ApiResponse ApiHandler::Logs(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  auto bad = [](const std::string& message) {
    return ErrorResponse(MakeApiError(400, "BadRequest", message));
  };
  Result<api::Json> pod = backend_.store().Get({"Pod", target.namespace_, target.name});
  if (!pod.ok()) return ErrorResponse(ApiErrorOf(pod.status(), &r, target.name));
  Result<std::string> requested = internal::RequestedContainer(*pod, request);
  if (!requested.ok()) return bad(std::string(requested.status().message()));
  const std::string& container = *requested;
  Result<LogOptions> options = LogOptionsOf(request, clock_);
  if (!options.ok()) return bad(std::string(options.status().message()));
  options->namespace_ = target.namespace_;
  options->pod = target.name;
  options->container = container;
  // As kube-apiserver: a pod on no node has no kubelet to ask, and no log
  // yet; the answer is empty (204), not an error.
  if (api::StringAt(*pod, {"spec", "nodeName"}).empty()) {
    ApiResponse none;
    none.code = 204;
    none.content_type = "text/plain";
    return none;
  }
  int32_t restarts = 0;
  bool started = false;
  std::string waiting = "ContainerCreating";
  if (const api::Json* c = internal::ContainerStatusOf(*pod, container)) {
    restarts = static_cast<int32_t>(api::IntAt(*c, {"restartCount"}));
    // Waiting with no run behind it: nothing logged yet.
    started = !api::ObjectAt(*c, {"state"}).contains("waiting") ||
              api::ObjectAt(*c, {"lastState"}).contains("terminated") || restarts > 0;
    waiting = api::StringAt(*c, {"state", "waiting", "reason"}, waiting);
  }
  if (!started) {
    return bad(fmt::format("container {:?} in pod {:?} is waiting to start: {}", container,
                           target.name, waiting));
  }
  Result<Backend::LogRun> run =
      backend_.Log(target.namespace_, target.name, container, options->previous);
  if (!run.ok() && options->previous) {
    return bad(fmt::format("previous terminated container {:?} in pod {:?} not found", container,
                           target.name));
  }
  if (!run.ok()) return bad(std::string(run.status().message()));
  if (!run->cri && (options->timestamps || options->since_ns > 0)) {
    // Refused, not ignored: a log shown without the times asked for, or
    // whole where only its end was wanted, would mislead.
    return bad(
        "this server's replica logs keep no time per line: timestamps, sinceTime and "
        "sinceSeconds cannot be applied; ask without them (tailLines shows the end)");
  }
  auto stream = std::make_unique<LogStream>(backend_, *options, std::move(*run), restarts);
  stream->SeekTail();
  ApiResponse response;
  response.content_type = "text/plain";
  response.stream = std::move(stream);
  return response;
}

}  // namespace trainyard::server
