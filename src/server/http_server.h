// The API over HTTP (or HTTPS with a certificate and key), on cpp-httplib:
// every request goes to the ApiHandler; watches and followed logs are sent
// chunked as they come. A request is read whole before a thread serves it
// (connection.h); a thread from a pool that grows to `max_threads` serves
// it, and a watch or followed log holds one for its whole life.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/handler.h"
#include "server/stream_slots.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace trainyard::server {

class ConnectionServer;

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  int port = 0;          // 0: any free port
  std::string tls_cert;  // both set: HTTPS
  std::string tls_key;
  size_t max_body_bytes = 3 * 1024 * 1024;  // Kubernetes' own limit on a request
  size_t max_threads = 1024;
  // Watches and followed logs one client (a token, or an address without
  // one) may have open at once.
  size_t max_streams_per_client = 128;
};

class HttpServer {
 public:
  HttpServer(ApiHandler& handler, HttpServerOptions options);
  ~HttpServer();

  // Binds the listening socket; returns the port.
  Result<int> Bind();
  // Serves until Stop(); call after Bind().
  void Serve();
  // Stops listening, ends every watch and followed log, and makes Serve()
  // return. Thread-safe.
  void Stop();

 private:
  // One request: refused when foreign, else the handler's answer, sent
  // whole or streamed.
  void Answer(const httplib::Request& req, httplib::Response& res, bool loopback);
  // A watch's or followed log's answer, chunk by chunk, in a stream slot.
  void Stream(const httplib::Request& req, httplib::Response& res, ApiResponse response);
  // A stream's or exec session's slot for the request's client; null, with
  // the 429 answered, when its share or the server's is taken.
  std::unique_ptr<StreamSlots::Slot> SlotFor(const httplib::Request& req, httplib::Response& res);
  // Takes the connection over for a pods/exec session (an upgrade to
  // WebSocket), or answers why it cannot.
  void ServeExec(const httplib::Request& req, httplib::Response& res, const ExecSpec& spec);

  ApiHandler& handler_;
  HttpServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  ConnectionServer* connections_ = nullptr;  // http_, as ours
  StreamSlots slots_;
  std::atomic<bool> stopping_{false};
};

}  // namespace trainyard::server
