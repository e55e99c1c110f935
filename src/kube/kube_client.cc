#include "kube/kube_client.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/x509.h>

#include <random>
#include <thread>

#include "api/registry.h"
#include "kube/pem.h"
#include "kube/rest_path.h"

namespace trainyard::kube {
namespace {

struct Url {
  bool https = true;
  std::string host;
  int port = 443;
  std::string prefix;  // "" or "/k8s/clusters/c-1"
};

Result<Url> ParseUrl(const std::string& text) {
  Url url;
  std::string_view rest = text;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
    url.https = false;
    url.port = 80;
  } else {
    return InvalidArgumentError(fmt::format("server {:?} is not an http(s) URL", text));
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    url.prefix = std::string(rest.substr(slash));
    while (url.prefix.ends_with('/')) url.prefix.pop_back();
  }
  size_t colon = authority.rfind(':');
  bool bracketed = authority.starts_with('[');
  size_t close = authority.find(']');
  if (colon != std::string_view::npos && (!bracketed || colon > close)) {
    std::string port(authority.substr(colon + 1));
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgumentError(fmt::format("server {:?} has a bad port", text));
    }
    url.port = std::stoi(port);
    authority = authority.substr(0, colon);
  }
  if (bracketed) authority = authority.substr(1, close - 1);
  if (authority.empty())
    return InvalidArgumentError(fmt::format("server {:?} names no host", text));
  url.host = std::string(authority);
  return url;
}

Result<X509_STORE*> CaStore(const std::string& pem) {
  X509_STORE* store = X509_STORE_new();
  int added = 0;
  for (const CertificatePtr& cert : ReadCertificates(pem)) {
    added += X509_STORE_add_cert(store, cert.get()) == 1 ? 1 : 0;  // takes its own reference
  }
  if (added == 0) {
    X509_STORE_free(store);
    return InvalidArgumentError("the certificate authority holds no PEM certificate");
  }
  return store;
}

Result<std::unique_ptr<httplib::SSLClient>> TlsClient(const Url& url, const ClusterConfig& config) {
  std::unique_ptr<httplib::SSLClient> client;
  if (!config.client_cert_pem.empty()) {
    CertificatePtr cert = ReadCertificate(config.client_cert_pem);
    PrivateKeyPtr key = ReadPrivateKey(config.client_key_pem);
    if (cert && key) {
      // The client's TLS context takes its own references.
      client = std::make_unique<httplib::SSLClient>(url.host, url.port, cert.get(), key.get());
    }
    if (!cert || !key) {
      return InvalidArgumentError(fmt::format("{}: the client {} is not PEM", config.source,
                                              cert == nullptr ? "certificate" : "key"));
    }
  } else {
    client = std::make_unique<httplib::SSLClient>(url.host, url.port);
  }
  if (!client->is_valid()) {
    return InvalidArgumentError(
        fmt::format("{}: the client certificate and key do not make a TLS context", config.source));
  }
  if (config.insecure_skip_tls_verify) {
    client->enable_server_certificate_verification(false);
  } else if (!config.ca_pem.empty()) {
    ASSIGN_OR_RETURN(X509_STORE * store, CaStore(config.ca_pem));
    client->set_ca_cert_store(store);  // the client owns it now
  }
  return client;
}

// The longest watch event line taken.
constexpr size_t kMaxEventBytes = 16 * 1024 * 1024;

// A watch ends on the server's side within this many seconds (randomised,
// as client-go does, so that many watches do not all reconnect at once).
int WatchTimeoutSeconds() {
  static thread_local std::mt19937 random(std::random_device{}());
  return 300 + static_cast<int>(random() % 300);
}

}  // namespace

Status StatusOfAnswer(int code, const std::string& body) {
  api::Json status = api::Json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string reason = api::StringAt(status, "reason");
  std::string message = api::StringAt(status, "message");
  if (message.empty()) message = fmt::format("HTTP {}: {}", code, body.substr(0, 200));
  switch (code) {
    case 400:
    case 422:
      return InvalidArgumentError(message);
    case 401:
      return Status(StatusCode::kUnauthenticated, message);
    case 403:
      return PermissionDeniedError(message);
    case 404:
      return NotFoundError(message);
    case 409:
      return reason == "AlreadyExists" ? AlreadyExistsError(message)
                                       : Status(StatusCode::kAborted, message);
    case 410:
      return OutOfRangeError(message);
    case 504:
      return Status(StatusCode::kDeadlineExceeded, message);
    default:
      if (code == 429 || code >= 500) return UnavailableError(message);
      return InternalError(message);
  }
}

void WatchHandle::Stop() {
  stopped_ = true;
  MutexLock lock(mu_);
  if (client_ != nullptr) client_->stop();
}

KubeClient::KubeClient(ClusterConfig config, KubeClientOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      limiter_(options_.qps, options_.burst) {}

KubeClient::~KubeClient() = default;

Result<std::unique_ptr<KubeClient>> KubeClient::Create(ClusterConfig config,
                                                       KubeClientOptions options) {
  std::unique_ptr<KubeClient> client(new KubeClient(std::move(config), std::move(options)));
  ASSIGN_OR_RETURN(Url url, ParseUrl(client->config_.server));
  client->prefix_ = url.prefix;
  // A bad CA or key is said now, not at the first request.
  ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> first, client->Connect());
  client->Give(std::move(first));
  return client;
}

Result<std::unique_ptr<httplib::ClientImpl>> KubeClient::Connect() const {
  ASSIGN_OR_RETURN(Url url, ParseUrl(config_.server));
  std::unique_ptr<httplib::ClientImpl> impl;
  if (url.https) {
    ASSIGN_OR_RETURN(impl, TlsClient(url, config_));
  } else {
    impl = std::make_unique<httplib::ClientImpl>(url.host, url.port);
  }
  if (!config_.token.empty()) {
    impl->set_bearer_token_auth(config_.token);
  } else if (!config_.username.empty()) {
    impl->set_basic_auth(config_.username, config_.password);
  }
  impl->set_default_headers({{"User-Agent", options_.user_agent}, {"Accept", "application/json"}});
  impl->set_tcp_nodelay(true);
  impl->set_connection_timeout(
      std::min<Duration>(options_.request_timeout, std::chrono::seconds(10)));
  impl->set_read_timeout(options_.request_timeout);
  impl->set_write_timeout(options_.request_timeout);
  impl->set_keep_alive(true);
  return impl;
}

// How long a kept connection is trusted to be open: below the 5 s an
// httplib server (trainyard's own) keeps an idle connection for, since
// cpp-httplib 0.11 sends on a connection the server has closed, and only
// its read then fails (Go's client notices the close while idle).
constexpr auto kIdleConnectionReuse = std::chrono::seconds(3);

std::unique_ptr<httplib::ClientImpl> KubeClient::Take() {
  MutexLock lock(mu_);
  auto now = std::chrono::steady_clock::now();
  while (!idle_.empty()) {
    IdleConnection kept = std::move(idle_.back());
    idle_.pop_back();
    if (now - kept.since < kIdleConnectionReuse) return std::move(kept.client);
  }
  return nullptr;
}

void KubeClient::Give(std::unique_ptr<httplib::ClientImpl> client) {
  MutexLock lock(mu_);
  idle_.push_back({std::move(client), std::chrono::steady_clock::now()});
}

void KubeClient::Throttle() {
  Duration wait = limiter_.Reserve(options_.clock->Now());
  // A rate limit is the one wait a client must make.
  if (wait > Duration::zero()) std::this_thread::sleep_for(wait);
}

Result<api::Json> KubeClient::Call(const std::string& method, const std::string& path,
                                   const api::Json& body, const std::string& content_type) {
  Throttle();
  std::unique_ptr<httplib::ClientImpl> client = Take();
  bool reused = client != nullptr;
  if (client == nullptr) {
    ASSIGN_OR_RETURN(client, Connect());
  }
  std::string text = body.is_null() ? "" : body.dump();
  std::string full = prefix_ + path;
  auto send = [&] {
    return method == "GET"     ? client->Get(full)
           : method == "POST"  ? client->Post(full, text, content_type)
           : method == "PUT"   ? client->Put(full, text, content_type)
           : method == "PATCH" ? client->Patch(full, text, content_type)
                               : client->Delete(full, text, content_type);
  };
  httplib::Result result = send();
  // A kept connection the server closed anyway fails the first request on
  // it: sent again on a new one where the server cannot have acted on it
  // (not written, or a read).
  if (!result && reused &&
      (result.error() == httplib::Error::Write ||
       (method == "GET" && result.error() == httplib::Error::Read))) {
    ASSIGN_OR_RETURN(client, Connect());
    result = send();
  }
  if (!result) {
    return UnavailableError(fmt::format("cannot reach the API server at {} ({}): {}",
                                        config_.server, config_.source,
                                        httplib::to_string(result.error())));
  }
  Give(std::move(client));
  if (result->status < 200 || result->status >= 300) {
    Status error = StatusOfAnswer(result->status, result->body);
    return Status(error.code(), fmt::format("{} {}: {}", method, path, error.message()));
  }
  api::Json answer = api::Json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    return InternalError(fmt::format("{} {}: the answer is not JSON", method, path));
  }
  return answer;
}

Result<api::Json> KubeClient::Get(const std::string& kind, const std::string& namespace_,
                                  const std::string& name) {
  ASSIGN_OR_RETURN(std::string path, ObjectPath(kind, namespace_, name));
  return Call("GET", path);
}

Result<api::Json> KubeClient::List(const std::string& kind, const std::string& namespace_) {
  ASSIGN_OR_RETURN(std::string path, CollectionPath(kind, namespace_));
  return Call("GET", path);
}

namespace {

struct Where {
  std::string kind, namespace_, name;
};

Where WhereOf(const api::Json& object) {
  return {api::StoreKindOf(object), api::StringAt(object, {"metadata", "namespace"}),
          api::StringAt(object, {"metadata", "name"})};
}

}  // namespace

Result<api::Json> KubeClient::Create(const api::Json& object) {
  Where w = WhereOf(object);
  ASSIGN_OR_RETURN(std::string path, CollectionPath(w.kind, w.namespace_));
  return Call("POST", path, object);
}

Result<api::Json> KubeClient::Update(const api::Json& object) {
  Where w = WhereOf(object);
  ASSIGN_OR_RETURN(std::string path, ObjectPath(w.kind, w.namespace_, w.name));
  return Call("PUT", path, object);
}

Result<api::Json> KubeClient::UpdateStatus(const api::Json& object) {
  Where w = WhereOf(object);
  ASSIGN_OR_RETURN(std::string path, ObjectPath(w.kind, w.namespace_, w.name, "status"));
  return Call("PUT", path, object);
}

Result<api::Json> KubeClient::Delete(const std::string& kind, const std::string& namespace_,
                                     const std::string& name) {
  ASSIGN_OR_RETURN(std::string path, ObjectPath(kind, namespace_, name));
  // Background propagation: the object goes now, its dependents after it
  // (the cluster's garbage collector), as kubectl delete does.
  return Call(
      "DELETE", path,
      api::Json{
          {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}});
}

Result<bool> KubeClient::Stream(const std::string& path, Duration idle_timeout,
                                const std::function<bool(std::string_view)>& on_data,
                                WatchHandle& handle) {
  Throttle();
  ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> client, Connect());
  client->set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(idle_timeout));
  {
    MutexLock lock(handle.mu_);
    if (handle.stopped_) return OkStatus();
    handle.client_ = client.get();
  }
  int code = 0;
  std::string error_body;
  bool ended_by_caller = false;
  httplib::Result result = client->Get(
      prefix_ + path, httplib::Headers{},
      [&](const httplib::Response& response) {
        code = response.status;
        return true;
      },
      [&](const char* data, size_t n) {
        if (code >= 300) {
          if (error_body.size() < 65536) error_body.append(data, n);
          return true;
        }
        if (!on_data(std::string_view(data, n)) || handle.stopped_) {
          ended_by_caller = true;
          return false;
        }
        return true;
      });
  {
    MutexLock lock(handle.mu_);
    handle.client_ = nullptr;
  }
  // httplib calls no response handler for an answer without a body (204).
  if (code == 0 && result) code = result->status;
  if (ended_by_caller || handle.stopped_) return false;
  if (code >= 300) return StatusOfAnswer(code, error_body);
  // No content is no stream's end: kube-apiserver answers so where it has
  // nothing to stream yet (the log of a pod on no node).
  if (code == 204) {
    return FailedPreconditionError(
        fmt::format("{} on {}: 204 No Content: nothing to read there yet", path, config_.server));
  }
  // A read that failed (nothing heard within idle_timeout, or the
  // connection cut mid-answer) did not reach the answer's end.
  if (!result && result.error() == httplib::Error::Read) return false;
  if (!result) {
    return UnavailableError(fmt::format("reading {} on {}: {}", path, config_.server,
                                        httplib::to_string(result.error())));
  }
  return true;  // the server ended the answer
}

Status KubeClient::Watch(const std::string& kind, const std::string& namespace_,
                         const std::string& resource_version,
                         const std::function<bool(const api::Json&)>& on_event,
                         WatchHandle& handle) {
  ASSIGN_OR_RETURN(std::string collection, CollectionPath(kind, namespace_));
  int timeout = WatchTimeoutSeconds();
  std::string path =
      fmt::format("{}?watch=true&allowWatchBookmarks=true&timeoutSeconds={}", collection, timeout);
  if (!resource_version.empty()) path += "&resourceVersion=" + resource_version;
  std::string pending;
  bool bad_line = false;
  Result<bool> streamed = Stream(
      path, std::chrono::seconds(timeout + 30),
      [&](std::string_view data) {
        pending.append(data);
        // etcd keeps objects under 1.5 MiB: a line far longer is no event.
        if (pending.size() > kMaxEventBytes && pending.find('\n') == std::string::npos) {
          bad_line = true;
          return false;
        }
        for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
          std::string line = pending.substr(0, end);
          pending.erase(0, end + 1);
          if (line.empty()) continue;
          api::Json event = api::Json::parse(line, nullptr, /*allow_exceptions=*/false);
          if (event.is_discarded()) {
            bad_line = true;
            return false;
          }
          if (!on_event(event)) return false;
        }
        return true;
      },
      handle);
  if (bad_line) {
    return InternalError(fmt::format("watching {}: an event is not JSON, or too long", kind));
  }
  return streamed.status();  // cut or ended: either way it is watched again
}

}  // namespace trainyard::kube
