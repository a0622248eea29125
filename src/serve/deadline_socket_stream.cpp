#include "serve/deadline_socket_stream.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>

namespace accel::serve {
namespace {

using Clock = DeadlineSocketStream::Clock;

// poll() of one socket until `limit`, resumed after a signal: the events that came, or 0 at the limit or on an error.
short poll_until(socket_t socket, short events, Clock::time_point limit) {
  pollfd entry{.fd = socket, .events = events, .revents = 0};
  for (;;) {
    const Clock::time_point now = Clock::now();
    // Rounded up: rounded down, the last wait before the limit would spin through polls of 0 ms.
    const long long left = limit <= now ? 0 : std::chrono::ceil<std::chrono::milliseconds>(limit - now).count();
    const int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, std::numeric_limits<int>::max())));
    if (ready > 0) return entry.revents;
    if (ready < 0 && errno != EINTR) return 0;
    if (ready == 0 && Clock::now() >= limit) return 0;
  }
}

ssize_t receive(socket_t socket, char* data, std::size_t size) {
  for (;;) {
    const ssize_t got = ::recv(socket, data, size, 0);
    if (got >= 0 || errno != EINTR) return got;
  }
}

// The numeric address and port of one end of `socket`, as getpeername or getsockname names it; left as they were
// when the socket cannot say.
void describe(socket_t socket, int (*name)(int, sockaddr*, socklen_t*), std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (name(socket, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, service, sizeof service,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  std::from_chars(service, service + std::strlen(service), port);
}

}  // namespace

DeadlineSocketStream::DeadlineSocketStream(socket_t socket, Clock::duration read_timeout, Clock::duration write_timeout)
    : socket_(socket), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

void DeadlineSocketStream::arm(Clock::duration budget) {
  deadline_ = Clock::now() + budget;
  failed_ = false;
  timed_out_ = false;
}

bool DeadlineSocketStream::readable_by(Clock::time_point until) const {
  return buffered() || poll_until(socket_, POLLIN, until) != 0;
}

Clock::time_point DeadlineSocketStream::read_limit() const { return std::min(deadline_, Clock::now() + read_timeout_); }

bool DeadlineSocketStream::is_readable() const { return readable_by(read_limit()); }

bool DeadlineSocketStream::is_writable() const {
  const short events = poll_until(socket_, POLLOUT, Clock::now() + write_timeout_);
  return (events & POLLOUT) != 0 && (events & (POLLERR | POLLHUP)) == 0;
}

ssize_t DeadlineSocketStream::read(char* ptr, size_t size) {
  if (!buffered()) {
    // Past the deadline nothing more is read, not even bytes already there: a client sending fast enough to keep
    // some waiting would otherwise be read on for as long as it liked.
    if (Clock::now() >= deadline_ || poll_until(socket_, POLLIN, read_limit()) == 0) {
      failed_ = true;
      timed_out_ = Clock::now() >= deadline_;
      return -1;
    }
    // A buffer's worth or more goes straight to the caller: copying it through the buffer would gain nothing.
    const bool direct = size >= buffer_.size();
    const ssize_t got = receive(socket_, direct ? ptr : buffer_.data(), direct ? size : buffer_.size());
    if (got <= 0) failed_ = true;
    if (got <= 0 || direct) return got;
    next_ = 0;
    end_ = static_cast<std::size_t>(got);
  }
  const std::size_t taken = std::min(size, end_ - next_);
  std::memcpy(ptr, buffer_.data() + next_, taken);
  next_ += taken;
  return static_cast<ssize_t>(taken);
}

ssize_t DeadlineSocketStream::write(const char* ptr, size_t size) {
  if (poll_until(socket_, POLLOUT, Clock::now() + write_timeout_) == 0) return -1;
  // MSG_NOSIGNAL: a client gone before its answer is an error here, not a SIGPIPE that ends the process.
  for (;;) {
    const ssize_t sent = ::send(socket_, ptr, size, MSG_NOSIGNAL);
    if (sent >= 0 || errno != EINTR) return sent;
  }
}

void DeadlineSocketStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  describe(socket_, ::getpeername, ip, port);
}

void DeadlineSocketStream::get_local_ip_and_port(std::string& ip, int& port) const {
  describe(socket_, ::getsockname, ip, port);
}

}  // namespace accel::serve
