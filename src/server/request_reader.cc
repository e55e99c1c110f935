#include "server/request_reader.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainyard::server {
namespace {

constexpr size_t kReadStep = 64 * 1024;  // per connection per turn: fair to the rest

bool WriteSmall(Connection& connection, std::string_view bytes) {
  return connection.write(bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
}

}  // namespace

RequestReader::RequestReader(ConnectionLimits limits, std::chrono::milliseconds idle_timeout,
                             Serve serve)
    : limits_(limits), idle_timeout_(idle_timeout), serve_(std::move(serve)) {}

RequestReader::~RequestReader() {
  Stop();
  if (epoll_ >= 0) ::close(epoll_);
  if (wake_ >= 0) ::close(wake_);
}

Status RequestReader::Start() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_ < 0 || wake_ < 0) {
    return UnavailableError(fmt::format("cannot wait for requests: {}", std::strerror(errno)));
  }
  epoll_event event{.events = EPOLLIN, .data = {.fd = wake_}};
  epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event);
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void RequestReader::Stop() {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (wake_ >= 0) (void)eventfd_write(wake_, 1);
  if (thread_.joinable()) thread_.join();
}

void RequestReader::Add(std::unique_ptr<Connection> connection, bool fresh) {
  {
    MutexLock lock(mu_);
    if (stopped_) return;  // closed as it goes
    added_.emplace_back(std::move(connection), fresh);
  }
  (void)eventfd_write(wake_, 1);
}

void RequestReader::Loop() {
  epoll_event events[128];
  while (true) {
    {
      MutexLock lock(mu_);
      if (stopped_) break;
    }
    int wait = 1000;
    if (!deadlines_.empty()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadlines_.begin()->first -
                                                                        Clock::now());
      wait = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 1000));
    }
    int n = epoll_wait(epoll_, events, std::size(events), wait);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_) {
        eventfd_t ignored;
        (void)eventfd_read(wake_, &ignored);
        TakeAdded();
      } else {
        OnReadable(events[i].data.fd, events[i].events);
      }
    }
    Expire(Clock::now());
    Feed();
  }
  // Stopped: every connection waiting here is closed.
  waiting_.clear();
  MutexLock lock(mu_);
  added_.clear();
}

void RequestReader::TakeAdded() {
  std::vector<std::pair<std::unique_ptr<Connection>, bool>> added;
  {
    MutexLock lock(mu_);
    added.swap(added_);
  }
  for (auto& [connection, fresh] : added) Watch(std::move(connection), fresh);
}

void RequestReader::Watch(std::unique_ptr<Connection> connection, bool fresh) {
  connection->SetBlocking(false);
  int fd = connection->socket();
  bool pending = !connection->Unread().empty();  // pipelined after the last request
  Waiting& w = waiting_[fd];
  w = Waiting{.connection = std::move(connection),
              .phase = fresh || pending ? Phase::kHead : Phase::kIdle};
  epoll_event event{.events = EPOLLIN | EPOLLRDHUP, .data = {.fd = fd}};
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) != 0) {
    Release(fd);  // closed
    return;
  }
  SetDeadline(fd, w,
              Clock::now() + (w.phase == Phase::kIdle ? idle_timeout_ : limits_.head_timeout));
  Count(w);
  if (pending) Advance(fd, w);
}

void RequestReader::OnReadable(int fd, uint32_t events) {
  auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  Waiting& w = it->second;
  if (w.starved) {
    // Watched for a hang-up alone while it waits for room.
    if ((events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) Release(fd);
    return;
  }
  int shaken = w.connection->Handshake();
  if (shaken < 0) {
    Release(fd);
    return;
  }
  if (shaken == 0) return;
  if (w.phase == Phase::kBody && buffered_ >= limits_.max_buffered_bytes) {
    // No room for more of a body: it waits, unread, until bodies held
    // here are served or time out. Heads are read still (each at most
    // max_head_bytes), so requests without a body never wait for room.
    epoll_event event{.events = EPOLLRDHUP, .data = {.fd = fd}};
    epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &event);
    w.starved = true;
    starved_.push_back(fd);
    return;
  }
  ssize_t n = w.connection->Fill(kReadStep);
  if (n == -2) return;  // a TLS record not yet whole
  if (n <= 0) {
    Release(fd);  // closed by the peer, or failed
    return;
  }
  Count(w);
  if (w.phase == Phase::kIdle) {
    w.phase = Phase::kHead;
    SetDeadline(fd, w, Clock::now() + limits_.head_timeout);
  }
  Advance(fd, w);
}

void RequestReader::Advance(int fd, Waiting& w) {
  RequestFraming framing = FrameRequest(w.connection->Unread(), limits_.framing);
  if (framing.head_size > 0 && !w.headed) {
    // Once, as the head is whole: a form's body is left for the handler.
    w.headed = true;
    std::string head(w.connection->Unread().substr(0, framing.head_size));
    std::string plain = WithUnparsedForm(head);
    if (plain != head) {
      w.connection->ReplaceUnread(framing.head_size, plain);
      Count(w);
      framing = FrameRequest(w.connection->Unread(), limits_.framing);
    }
  }
  switch (framing.state) {
    case RequestFraming::kComplete:
      serve_(Release(fd));
      return;
    case RequestFraming::kTooLarge: {
      // Refused unread: no thread waits for a body that is not wanted.
      std::unique_ptr<Connection> c = Release(fd);
      std::string_view head = c->Unread().substr(0, framing.head_size);
      (void)WriteSmall(*c, limits_.refuse_too_large
                               ? limits_.refuse_too_large(head)
                               : "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n"
                                 "Content-Length: 0\r\n\r\n");
      return;
    }
    case RequestFraming::kMalformed: {
      std::unique_ptr<Connection> c = Release(fd);
      (void)WriteSmall(*c,
                       "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
                       "Content-Length: 0\r\n\r\n");
      return;
    }
    case RequestFraming::kNeedMore:
      break;
  }
  if (framing.head_size == 0 || w.phase == Phase::kBody) return;
  w.phase = Phase::kBody;
  SetDeadline(fd, w, Clock::now() + limits_.body_timeout);
  if (!framing.expect_continue) return;
  // The client waits for this before it sends the body. It is said here,
  // so the line goes: httplib would say it again.
  std::string head(w.connection->Unread().substr(0, framing.head_size));
  w.connection->ReplaceUnread(framing.head_size, WithoutExpect(head));
  Count(w);
  if (!WriteSmall(*w.connection, "HTTP/1.1 100 Continue\r\n\r\n")) Release(fd);
}

void RequestReader::SetDeadline(int fd, Waiting& w, Clock::time_point deadline) {
  deadlines_.erase({w.deadline, fd});
  w.deadline = deadline;
  deadlines_.insert({deadline, fd});
}

void RequestReader::Expire(Clock::time_point now) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    // Too slow, or idle too long: closed, as Go's server closes it.
    Release(deadlines_.begin()->second);
  }
}

std::unique_ptr<Connection> RequestReader::Release(int fd) {
  auto it = waiting_.find(fd);
  if (it == waiting_.end()) return nullptr;
  Waiting& w = it->second;
  deadlines_.erase({w.deadline, fd});
  buffered_ -= w.counted;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  std::unique_ptr<Connection> connection = std::move(w.connection);
  waiting_.erase(it);
  return connection;
}

void RequestReader::Count(Waiting& w) {
  buffered_ -= w.counted;
  w.counted = w.connection->Unread().size();
  buffered_ += w.counted;
}

void RequestReader::Feed() {
  while (!starved_.empty() && buffered_ < limits_.max_buffered_bytes) {
    int fd = starved_.front();
    starved_.pop_front();
    auto it = waiting_.find(fd);
    if (it == waiting_.end() || !it->second.starved) continue;  // gone since
    it->second.starved = false;
    epoll_event event{.events = EPOLLIN | EPOLLRDHUP, .data = {.fd = fd}};
    epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &event);
  }
}

}  // namespace trainyard::server
