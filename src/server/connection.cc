#include "server/connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "server/elastic_pool.h"
#include "server/request_reader.h"

namespace trainyard::server {
namespace {

constexpr size_t kReadBlock = 16 * 1024;  // a TLS record's worth
thread_local Connection* current = nullptr;

void AddressOf(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    port = ntohs(in6->sin6_port);
  }
  ip = text;
}

void SetTimeout(int fd, int option, std::chrono::milliseconds timeout) {
  timeval tv{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
             .tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

}  // namespace

Connection::Connection(int fd, SSL* ssl, std::chrono::milliseconds read_timeout,
                       std::chrono::milliseconds write_timeout)
    : fd_(fd),
      ssl_(ssl),
      read_timeout_(read_timeout),
      write_timeout_(write_timeout),
      handshaken_(ssl == nullptr) {
  // What blocks past them fails, as httplib's own streams do: a client
  // that stops reading or sends half a record holds no thread for long.
  SetTimeout(fd_, SO_RCVTIMEO, read_timeout_);
  SetTimeout(fd_, SO_SNDTIMEO, write_timeout_);
}

Connection::~Connection() {
  if (current == this) current = nullptr;
  if (ssl_ != nullptr) {
    if (!taken_ && handshaken_) SSL_shutdown(ssl_);
    SSL_free(ssl_);
  }
  ::shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
}

Connection* Connection::Current() { return current; }

bool Connection::Poll(short events, std::chrono::milliseconds timeout) const {
  pollfd p{.fd = fd_, .events = events, .revents = 0};
  int n;
  do {
    n = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (n < 0 && errno == EINTR);
  return n > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
}

bool Connection::HasBuffered() const {
  return buffer_at_ < buffer_.size() || (ssl_ != nullptr && SSL_pending(ssl_) > 0);
}

bool Connection::is_readable() const { return HasBuffered() || Poll(POLLIN, read_timeout_); }

bool Connection::is_writable() const {
  pollfd p{.fd = fd_, .events = POLLOUT, .revents = 0};
  if (::poll(&p, 1, static_cast<int>(write_timeout_.count())) <= 0) return false;
  if ((p.revents & (POLLHUP | POLLERR)) != 0) return false;
  // A peer that closed its end reads as end of file: nothing more to send.
  if (HasBuffered()) return true;
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0;
}

ssize_t Connection::ReadSocket(char* ptr, size_t size) {
  if (ssl_ == nullptr) {
    ssize_t n;
    do {
      n = recv(fd_, ptr, size, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -2;  // taken: nothing yet
    return n;
  }
  int n = SSL_read(ssl_, ptr, static_cast<int>(size));
  if (n > 0) return n;
  int error = SSL_get_error(ssl_, n);
  ERR_clear_error();
  if (error == SSL_ERROR_ZERO_RETURN) return 0;
  // Taken (non-blocking): part of a record only, so far.
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return -2;
  return -1;
}

ssize_t Connection::read(char* ptr, size_t size) {
  if (taken_) return 0;
  ssize_t n = ReadFor(ptr, size, read_timeout_);
  return n == -2 ? -1 : n;
}

ssize_t Connection::ReadFor(char* ptr, size_t size, std::chrono::milliseconds wait) {
  if (buffer_at_ == buffer_.size()) {
    if (!HasBuffered() && !Poll(POLLIN, wait)) return -2;
    ssize_t n = Fill(kReadBlock);
    if (n <= 0) return n == -2 && !taken_ ? -1 : n;
  }
  size_t n = std::min(size, buffer_.size() - buffer_at_);
  std::copy_n(buffer_.data() + buffer_at_, n, ptr);
  buffer_at_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t Connection::Fill(size_t max) {
  if (buffer_at_ == buffer_.size()) {
    buffer_.clear();
    buffer_at_ = 0;
  }
  size_t got = 0;
  // A TLS record is decrypted whole: what is left of one once `max` is
  // reached is read too, as no poll would tell of it.
  while (got < max || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) {
    size_t at = buffer_.size();
    buffer_.resize(at + kReadBlock);
    ssize_t n = ReadSocket(buffer_.data() + at, kReadBlock);
    buffer_.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n <= 0) return got > 0 ? static_cast<ssize_t>(got) : n;
    got += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

std::string_view Connection::Unread() const { return std::string_view(buffer_).substr(buffer_at_); }

void Connection::ReplaceUnread(size_t size, std::string_view head) {
  buffer_.replace(buffer_at_, size, head);
}

void Connection::SetBlocking(bool blocking) {
  int flags = fcntl(fd_, F_GETFL);
  fcntl(fd_, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

int Connection::Handshake() {
  if (handshaken_) return 1;
  int rc = SSL_accept(ssl_);
  if (rc == 1) {
    handshaken_ = true;
    return 1;
  }
  int error = SSL_get_error(ssl_, rc);
  ERR_clear_error();
  return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

ssize_t Connection::write(const char* ptr, size_t size) {
  if (taken_) return static_cast<ssize_t>(size);  // the taker's now
  return WriteAll(std::string_view(ptr, size)) ? static_cast<ssize_t>(size) : -1;
}

bool Connection::WriteAll(std::string_view bytes) {
  auto deadline = std::chrono::steady_clock::now() + write_deadline_;
  while (!bytes.empty()) {
    ssize_t n;
    bool again = false;
    if (ssl_ != nullptr) {
      int written = SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
      if (written <= 0) {
        int error = SSL_get_error(ssl_, written);
        again = error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ;
        ERR_clear_error();
      }
      n = written;
    } else {
      do {
        n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      again = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    if (again && taken_) {
      // The client reads slowly: wait for room, within the deadline.
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !Poll(POLLOUT, left)) return false;
      continue;
    }
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Connection::Take(std::chrono::milliseconds write_deadline) {
  taken_ = true;
  write_deadline_ = write_deadline;
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

void Connection::Linger(std::chrono::milliseconds wait) {
  ::shutdown(fd_, SHUT_WR);
  auto deadline = std::chrono::steady_clock::now() + wait;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    ssize_t n = ReadFor(buffer, sizeof(buffer), std::chrono::milliseconds(50));
    if (n == 0 || n == -1) return;  // the client closed too
  }
}

void Connection::get_remote_ip_and_port(std::string& ip, int& port) const {
  AddressOf(fd_, true, ip, port);
}

void Connection::get_local_ip_and_port(std::string& ip, int& port) const {
  AddressOf(fd_, false, ip, port);
}

ConnectionServer::ConnectionServer(ConnectionLimits limits) : limits_(limits) {}

ConnectionServer::~ConnectionServer() {
  StopServing();
  if (tls_ != nullptr) SSL_CTX_free(tls_);
}

Status ConnectionServer::UseTls(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return InternalError("cannot make a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  bool ok = SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) == 1 &&
            SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) == 1 &&
            SSL_CTX_check_private_key(ctx) == 1;
  ERR_clear_error();
  if (!ok) {
    SSL_CTX_free(ctx);
    return InvalidArgumentError(
        fmt::format("cannot use the certificate {} with the key {}", cert_file, key_file));
  }
  tls_ = ctx;
  return OkStatus();
}

Status ConnectionServer::Start() {
  ::listen(svr_sock_, SOMAXCONN);
  pool_ = std::make_unique<ElasticPool>(limits_.max_threads);
  reader_ = std::make_unique<RequestReader>(
      limits_, std::chrono::seconds(keep_alive_timeout_sec_),
      [this](std::unique_ptr<Connection> connection) {
        // A std::function must be copyable: the connection travels in a
        // shared_ptr, and is taken out by the one call.
        auto held = std::make_shared<std::unique_ptr<Connection>>(std::move(connection));
        pool_->enqueue([this, held] { Serve(std::move(*held)); });
      });
  return reader_->Start();
}

void ConnectionServer::StopServing() {
  if (reader_) reader_->Stop();
  if (pool_) pool_->shutdown();
}

bool ConnectionServer::process_and_close_socket(int sock) {
  std::chrono::milliseconds read_timeout(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000);
  std::chrono::milliseconds write_timeout(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000);
  SSL* ssl = nullptr;
  if (tls_ != nullptr) {
    ssl = SSL_new(tls_);
    if (ssl == nullptr || SSL_set_fd(ssl, sock) != 1) {
      if (ssl != nullptr) SSL_free(ssl);
      ERR_clear_error();
      ::close(sock);
      return false;
    }
  }
  auto connection = std::make_unique<Connection>(sock, ssl, read_timeout, write_timeout);
  connection->requests_left = keep_alive_max_count_;
  if (reader_ == nullptr) return false;  // closed with the connection
  reader_->Add(std::move(connection), /*fresh=*/true);
  return true;
}

void ConnectionServer::Serve(std::unique_ptr<Connection> connection) {
  connection->SetBlocking(true);
  bool closed = false;
  current = connection.get();
  bool ok = process_request(*connection, connection->requests_left <= 1, closed, nullptr);
  current = nullptr;
  if (!ok || closed || connection->taken() || --connection->requests_left == 0) return;
  reader_->Add(std::move(connection), /*fresh=*/false);
}

}  // namespace trainyard::server
