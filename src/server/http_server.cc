#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/listen.h"
#include "common/loopback.h"
#include "common/strings.h"
#include "server/api_path.h"
#include "server/connection.h"
#include "server/elastic_pool.h"
#include "server/exec_session.h"
#include "server/peer_owner.h"
#include "server/request_framing.h"
#include "server/stream_slots.h"
#include "server/websocket.h"

namespace trainyard::server {
namespace {

// httplib compresses with brotli whenever a client accepts it, and every
// browser does: ten megabytes of jobs took seven times as long to send as
// with gzip (the dashboard's list of 10,000). gzip, if accepted, is as
// far as a response goes. (httplib's Request is a local of its own,
// passed as const: changing its headers is well defined.)
void OfferGzipAtMost(const httplib::Request& req) {
  auto& headers = const_cast<httplib::Request&>(req).headers;
  auto it = headers.find("Accept-Encoding");
  if (it == headers.end() || it->second.find("br") == std::string::npos) return;
  bool gzip = it->second.find("gzip") != std::string::npos;
  headers.erase("Accept-Encoding");
  if (gzip) headers.emplace("Accept-Encoding", "gzip");
}

// The 403 for a request a web page made behind its user's back: one from
// another origin (a browser names it in Origin; the API's own pages are
// same-origin), or, on a loopback server, one whose Host is not loopback
// (a page whose name was rebound to 127.0.0.1 would otherwise be same-origin
// with the API). Clients that are no browser send neither.
std::optional<ApiError> ForeignRequest(const httplib::Request& req, bool loopback) {
  std::string host = req.get_header_value("Host");
  std::string origin = req.get_header_value("Origin");
  if (!origin.empty() && origin != "http://" + host && origin != "https://" + host) {
    return MakeApiError(403, "Forbidden",
                        fmt::format("a request from the web page at {} to {}: this API takes "
                                    "none from other origins",
                                    origin, host));
  }
  if (loopback && !host.empty()) {
    if (!IsLoopbackHost(HostWithoutPort(host))) {
      return MakeApiError(403, "Forbidden",
                          fmt::format("Host {:?}: this server listens on loopback and answers "
                                      "requests for 127.0.0.1 or localhost alone",
                                      host));
    }
  }
  return std::nullopt;
}

// The query of a request target as sent, for ParseQuery: httplib's own
// split keeps the last piece of `a=b=c`, not `b=c`.
std::string_view QueryOf(const std::string& target) {
  size_t q = target.find('?');
  return q == std::string::npos ? std::string_view() : std::string_view(target).substr(q + 1);
}

// The Content-Type as the client sent it (request_framing.h renames a
// form's, so that httplib leaves its body alone).
std::string ContentTypeOf(const httplib::Request& req) {
  std::string type = req.get_header_value("Content-Type");
  return type == kUnparsedForm ? "application/x-www-form-urlencoded" : type;
}

ApiRequest ToApiRequest(const httplib::Request& req) {
  ApiRequest out{.method = req.method,
                 .path = req.path,
                 .query = ParseQuery(QueryOf(req.target)),
                 .content_type = ContentTypeOf(req),
                 .accept = req.get_header_value("Accept"),
                 .authorization = req.get_header_value("Authorization"),
                 .user_agent = req.get_header_value("User-Agent"),
                 .body = req.body};
  return out;
}

// Who a request comes from, for per-client bounds: its bearer token when
// it has one (many users may share an address); else, on loopback, where
// every local process shares 127.0.0.1, the user owning its socket, so no
// one user's streams can lock the others out; else its address.
std::string ClientOf(const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  if (!auth.empty()) return "token " + auth;
  Connection* connection = Connection::Current();
  if (connection != nullptr) {
    if (std::optional<uid_t> uid = LoopbackPeerUid(connection->socket())) {
      return fmt::format("uid {}", *uid);
    }
  }
  return "address " + req.remote_addr;
}

// A stream being sent, with what it holds until it ends.
struct OpenStream {
  std::unique_ptr<ResponseStream> stream;
  std::unique_ptr<StreamSlots::Slot> slot;
  int fd = -1;  // the connection, to notice a client gone; -1 if not found
};

// What a request over the body limit is told, by where it went.
std::string TooLargeBody(std::string_view path, size_t limit_mib) {
  if (path.find("/api/2.0/mlflow-artifacts/") != std::string_view::npos) {
    // MLflow's client shows the message: the way for a large file is the
    // job's own output folder, which has no such limit.
    return api::Json{{"error_code", "INVALID_PARAMETER_VALUE"},
                     {"message", fmt::format("an artifact uploaded is at most {} MiB; a job "
                                             "writes larger ones to its $TRAINYARD_OUTPUT_DIR "
                                             "(docs/tracking.md)",
                                             limit_mib)}}
        .dump();
  }
  return MakeApiError(413, "RequestEntityTooLarge",
                      fmt::format("the request is too large: the limit is {} MiB", limit_mib))
      .body.dump();
}

// The whole 413 response the request reader sends for a body too large,
// without reading it.
std::string TooLargeResponse(std::string_view head, size_t limit_mib) {
  std::string_view target = TargetOf(head);
  std::string body = TooLargeBody(target.substr(0, target.find('?')), limit_mib);
  return fmt::format(
      "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
      body.size(), body);
}

void SetError(httplib::Response& res, const ApiError& error) {
  res.status = error.code;
  res.set_content(error.body.dump(), "application/json");
}

}  // namespace

HttpServer::HttpServer(ApiHandler& handler, HttpServerOptions options)
    : handler_(handler),
      options_(std::move(options)),
      // Streams may take at most three quarters of the threads: the rest
      // always serve other requests, health checks among them.
      slots_(options_.max_threads * 3 / 4, options_.max_streams_per_client) {}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind() {
  size_t limit_mib = options_.max_body_bytes >> 20;
  auto server = std::make_unique<ConnectionServer>(
      ConnectionLimits{.max_threads = options_.max_threads,
                       .framing = {.max_body_bytes = options_.max_body_bytes},
                       .refuse_too_large = [limit_mib](std::string_view head) {
                         return TooLargeResponse(head, limit_mib);
                       }});
  if (!options_.tls_cert.empty() || !options_.tls_key.empty()) {
    if (options_.tls_cert.empty() || options_.tls_key.empty()) {
      return InvalidArgumentError("--tls-cert and --tls-key go together");
    }
    RETURN_IF_ERROR(server->UseTls(options_.tls_cert, options_.tls_key));
  }
  connections_ = server.get();
  http_ = std::move(server);
  httplib::Server& http = *http_;
  // httplib's own pool only hands each accepted connection over to the
  // ConnectionServer's reader; requests are served on the latter's pool.
  http.new_task_queue = [] { return new ElasticPool(2); };
  http.set_payload_max_length(options_.max_body_bytes);
  // httplib writes a response's headers and body apart: with Nagle's
  // algorithm and the client's delayed ACK, every small answer waited 40 ms.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(1000);
  bool loopback = IsLoopbackHost(options_.address);
  auto serve = [this, loopback](const httplib::Request& req, httplib::Response& res) {
    Answer(req, res, loopback);
  };
  for (const char* pattern : {".*"}) {
    http.Get(pattern, serve);
    http.Post(pattern, serve);
    http.Put(pattern, serve);
    http.Patch(pattern, serve);
    http.Delete(pattern, serve);
  }
  http.set_error_handler([limit_mib](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      res.set_content(TooLargeBody(req.path, limit_mib), "application/json");
    } else {
      SetError(res, MakeApiError(res.status, "BadRequest", "the request cannot be served"));
    }
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SetError(res, MakeApiError(500, "InternalError", "the server failed on this request"));
      });
  http.set_socket_options(SetExclusiveListenOptions);
  int port = options_.port == 0
                 ? http.bind_to_any_port(options_.address)
                 : (http.bind_to_port(options_.address, options_.port) ? options_.port : -1);
  if (port <= 0) {
    return UnavailableError(fmt::format("cannot listen on {}:{}: {}", options_.address,
                                        options_.port, std::strerror(errno)));
  }
  RETURN_IF_ERROR(connections_->Start());
  return port;
}

void HttpServer::Answer(const httplib::Request& req, httplib::Response& res, bool loopback) {
  if (std::optional<ApiError> foreign = ForeignRequest(req, loopback)) {
    res.status = foreign->code;
    res.set_content(foreign->body.dump(), "application/json");
    return;
  }
  ApiResponse response = handler_.Handle(ToApiRequest(req));
  if (response.exec) {
    ServeExec(req, res, *response.exec);
    return;
  }
  res.status = response.code;
  for (const std::string& w : response.warnings) {
    res.set_header("Warning", fmt::format("299 - {}", api::Json(w).dump()));
  }
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  if (!response.stream) {
    OfferGzipAtMost(req);
    res.set_content(response.body, response.content_type);
    return;
  }
  Stream(req, res, std::move(response));
}

void HttpServer::Stream(const httplib::Request& req, httplib::Response& res, ApiResponse response) {
  std::unique_ptr<StreamSlots::Slot> slot = SlotFor(req, res);
  if (slot == nullptr) return;
  // httplib compresses when the client accepts gzip (kubectl does), and
  // its compressor holds chunks back until it has a block's worth: a
  // watch or followed log would show nothing for minutes. A stream goes
  // uncompressed. (httplib's Request is a local of its own, passed as
  // const: dropping the header from it is well defined.)
  const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
  auto open = std::make_shared<OpenStream>(
      OpenStream{.stream = std::move(response.stream),
                 .slot = std::move(slot),
                 .fd = Connection::Current() != nullptr ? Connection::Current()->socket() : -1});
  res.set_chunked_content_provider(
      response.content_type, [this, open](size_t, httplib::DataSink& sink) {
        std::string out;
        bool more = open->stream->Next(out, std::chrono::milliseconds(500));
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        // Broken off: without its last chunk the client sees the transfer
        // fail, not end.
        if (!more && open->stream->Failed()) return false;
        // A client that went away ends its stream within one wait, so its
        // thread is free again at once, not when the watch would time out.
        if (out.empty() && PeerClosed(open->fd)) return false;
        if (!more || stopping_) sink.done();
        return true;
      });
}

std::unique_ptr<StreamSlots::Slot> HttpServer::SlotFor(const httplib::Request& req,
                                                       httplib::Response& res) {
  std::string why;
  std::unique_ptr<StreamSlots::Slot> slot = slots_.Acquire(ClientOf(req), why);
  if (slot == nullptr) {
    res.set_header("Retry-After", "1");
    SetError(res, MakeApiError(429, "TooManyRequests", why));
  }
  return slot;
}

void HttpServer::ServeExec(const httplib::Request& req, httplib::Response& res,
                           const ExecSpec& spec) {
  Connection* connection = Connection::Current();
  std::string key = req.get_header_value("Sec-WebSocket-Key");
  std::string offered;
  for (size_t i = 0; i < req.get_header_value_count("Sec-WebSocket-Protocol"); ++i) {
    offered += req.get_header_value("Sec-WebSocket-Protocol", i) + ",";
  }
  std::string protocol = PickExecProtocol(offered);
  // The bound first: kubectl retries a refused upgrade over SPDY, and it
  // is the answer to that retry the user sees, which must say why.
  std::unique_ptr<StreamSlots::Slot> slot = SlotFor(req, res);
  if (slot == nullptr) return;
  if (connection == nullptr || AsciiLower(req.get_header_value("Upgrade")) != "websocket" ||
      key.empty()) {
    SetError(res, MakeApiError(400, "BadRequest",
                               "exec is served over WebSocket only, which kubectl 1.30 and newer "
                               "speak (for kubectl 1.29, set "
                               "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true); SPDY is not supported"));
    return;
  }
  if (protocol.empty()) {
    SetError(res, MakeApiError(400, "BadRequest",
                               "exec speaks the v5.channel.k8s.io and v4.channel.k8s.io "
                               "subprotocols; none was offered"));
    return;
  }
  // A client may stop reading for a while (a pager, Ctrl-S); one that
  // reads nothing for this long is gone.
  connection->Take(std::chrono::minutes(15));
  std::string upgraded = fmt::format(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {}\r\n\r\n",
      websocket::AcceptKey(key), protocol);
  if (!connection->WriteAll(upgraded)) return;
  RunExecSession(*connection, spec, protocol, stopping_);
}

void HttpServer::Serve() {
  if (http_) http_->listen_after_bind();
}

void HttpServer::Stop() {
  stopping_ = true;
  if (http_) http_->stop();
  if (connections_ != nullptr) connections_->StopServing();
}

}  // namespace trainyard::server
