// The server's connections, plain or TLS, read and written by trainyard
// rather than by httplib, so that a request may take its connection over
// (an upgrade to WebSocket for `kubectl exec`), which httplib 0.11 (Debian
// 12's) cannot do: the Connection is the httplib::Stream each request on it
// is processed from, and the request that takes it goes on reading and
// writing it after its handler's response would have been sent.
// ConnectionServer is httplib's server with its per-connection loop
// replaced by ours; everything else (routing, parsing, the thread pool) is
// httplib's.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"

namespace trainyard::server {

class Connection final : public httplib::Stream {
 public:
  // `ssl` null: plain. Takes the SSL object (freed here); never the fd.
  Connection(int fd, SSL* ssl, std::chrono::milliseconds read_timeout,
             std::chrono::milliseconds write_timeout);
  ~Connection() override;

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

  // Waits for a request to begin, up to `timeout`, checking every 100 ms
  // that the server still listens (`listening`, its socket, is -1 once it
  // stops); false when none came, the peer closed, or the server stopped.
  bool WaitForRequest(std::chrono::milliseconds timeout, const std::atomic<int>& listening);

 private:
  ssize_t ReadSocket(char* ptr, size_t size);
  bool Poll(short events, std::chrono::milliseconds timeout) const;

  int fd_;
  SSL* ssl_;
  std::chrono::milliseconds read_timeout_;
  std::chrono::milliseconds write_timeout_;
  bool taken_ = false;
  std::chrono::milliseconds write_deadline_{0};
  // httplib reads a request's head a byte at a time: read in blocks.
  std::string buffer_;
  size_t buffer_at_ = 0;
};

class ConnectionServer final : public httplib::Server {
 public:
  ConnectionServer() = default;
  ~ConnectionServer() override;

  // Serves TLS with this certificate chain and key.
  Status UseTls(const std::string& cert_file, const std::string& key_file);
  // What httplib listen()s with is too short a backlog for a burst of
  // clients; Linux lets it be raised on the listening socket.
  void WidenBacklog();

 private:
  bool process_and_close_socket(int sock) override;
  SSL_CTX* tls_ = nullptr;
};

}  // namespace trainyard::server
