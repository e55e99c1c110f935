// The server's connections, plain or TLS, read and written by trainyard
// rather than by httplib, for two reasons httplib 0.11 (Debian 12's) has no
// answer to:
// - a request may take its connection over (an upgrade to WebSocket for
//   `kubectl exec`) and go on reading and writing it after its handler's
//   response would have been sent;
// - a connection holds no thread while it waits for a request: the
//   RequestReader (request_reader.h) completes TLS handshakes and reads
//   each request whole, within deadlines, before a thread serves it, so
//   clients that send slowly, or not at all, take no thread from others.
// ConnectionServer is httplib's server with its per-connection loop
// replaced by ours; routing and parsing stay httplib's.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/request_framing.h"

namespace trainyard::server {

class ElasticPool;
class RequestReader;

class Connection final : public httplib::Stream {
 public:
  // `ssl` null: plain; else one set on `fd`, its handshake still to come
  // (Handshake). Takes both: the connection is closed with it.
  Connection(int fd, SSL* ssl, std::chrono::milliseconds read_timeout,
             std::chrono::milliseconds write_timeout);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The connection processing this thread's request, while it is
  // processed; null elsewhere.
  static Connection* Current();

  // httplib::Stream, for the request's processing.
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

  // Takes the connection over from httplib: what it writes from now on
  // goes nowhere, and no further request is read from it. The socket turns
  // non-blocking: the taker waits on it as it likes (ReadFor), and a write
  // waits up to `write_deadline` for a client that reads slowly.
  void Take(std::chrono::milliseconds write_deadline);
  bool taken() const { return taken_; }
  // For the taker: bytes already received and not yet read (read before
  // waiting on the socket).
  bool HasBuffered() const;
  // Reads what is there, after waiting up to `wait` for it: > 0 bytes, 0
  // when the peer closed, -1 on an error, -2 when nothing came in time.
  ssize_t ReadFor(char* ptr, size_t size, std::chrono::milliseconds wait);
  // Writes all of `bytes`, or false.
  bool WriteAll(std::string_view bytes);
  // For the taker, at its end: says it sends no more, and reads what the
  // client still sends for up to `wait`, so that closing does not reset
  // the connection under the client's last read.
  void Linger(std::chrono::milliseconds wait);

  // For the RequestReader, with the socket non-blocking (SetBlocking):
  // one step of the TLS handshake: 1 done (or plain), 0 to be continued
  // when the socket is readable, -1 failed.
  int Handshake();
  // Reads what the socket has, up to `max` bytes, after what is buffered:
  // > 0 bytes, 0 when the peer closed, -1 on an error, -2 when nothing
  // is there.
  ssize_t Fill(size_t max);
  // What was received and not yet read.
  std::string_view Unread() const;
  // Replaces the first `size` unread bytes (a request's head) with `head`.
  void ReplaceUnread(size_t size, std::string_view head);
  void SetBlocking(bool blocking);
  // How many more requests may be served on it (keep-alive's bound).
  size_t requests_left = 0;

 private:
  ssize_t ReadSocket(char* ptr, size_t size);
  bool Poll(short events, std::chrono::milliseconds timeout) const;

  int fd_;
  SSL* ssl_;
  std::chrono::milliseconds read_timeout_;
  std::chrono::milliseconds write_timeout_;
  bool handshaken_;
  bool taken_ = false;
  std::chrono::milliseconds write_deadline_{0};
  // httplib reads a request's head a byte at a time: read in blocks.
  std::string buffer_;
  size_t buffer_at_ = 0;
};

struct ConnectionLimits {
  size_t max_threads = 1024;  // serving requests, watches and exec sessions
  // From a connection's first byte (its TLS handshake included) until its
  // request's head is whole, as Go's ReadHeaderTimeout.
  std::chrono::milliseconds head_timeout{15'000};
  // From a request's head until its body is whole.
  std::chrono::milliseconds body_timeout{60'000};
  // Bytes held for requests being received, all connections together;
  // past it, bodies wait for room (heads, each at most
  // framing.max_head_bytes, are read still).
  size_t max_buffered_bytes = 256u << 20;
  FramingLimits framing;
  // The whole response (status line on) to a request whose body is over
  // framing.max_body_bytes, given its head: sent without reading the body,
  // and the connection closed. Unset: a plain 413.
  std::function<std::string(std::string_view head)> refuse_too_large;
};

class ConnectionServer final : public httplib::Server {
 public:
  explicit ConnectionServer(ConnectionLimits limits);
  ~ConnectionServer() override;

  // Serves TLS with this certificate chain and key.
  Status UseTls(const std::string& cert_file, const std::string& key_file);
  // After binding: widens the listening backlog (httplib's is too short
  // for a burst of clients) and starts reading requests.
  Status Start();
  // After httplib's stop(): closes every waiting connection, and waits
  // for the requests being served.
  void StopServing();

 private:
  bool process_and_close_socket(int sock) override;
  // Serves the whole request `connection` holds, on a pool thread, then
  // hands it back to wait for its next one.
  void Serve(std::unique_ptr<Connection> connection);

  ConnectionLimits limits_;
  SSL_CTX* tls_ = nullptr;
  std::unique_ptr<ElasticPool> pool_;
  std::unique_ptr<RequestReader> reader_;
};

}  // namespace trainyard::server
