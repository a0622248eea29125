// The unique id's exchange over TCP (launcher.hpp says why): one message (unique_id_message.hpp), then the server
// closes.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "accel/libs/collective/launcher.hpp"
#include "libs/collective/unique_id_message.hpp"

namespace accel::collective {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

Status os_error(std::string_view what) {
  return Status(Code::unavailable, fmt::format("{}: {}", what, std::strerror(errno)), Source::os, errno);
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Waits for `events` on fd until the deadline.
Status wait_for(int fd, short events, Clock::time_point deadline, std::string_view what) {
  pollfd p{.fd = fd, .events = events, .revents = 0};
  for (;;) {
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready > 0) return Status();
    if (ready == 0) return deadline_exceeded(fmt::format("{}: timed out", what));
    if (errno != EINTR) return os_error(what);
  }
}

}  // namespace

Status serve_unique_id(const UniqueId& id, std::int32_t world_size, std::uint16_t port, std::int32_t clients,
                       std::chrono::milliseconds timeout) {
  if (clients <= 0) return Status();
  const Clock::time_point deadline = Clock::now() + timeout;
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) return os_error("socket");
  const int yes = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(port);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
    return os_error(fmt::format("binding the unique id's port {}", port));
  if (::listen(listener.get(), clients) != 0) return os_error("listen");
  const UniqueIdMessage message = encode_unique_id_message(id, world_size);
  for (std::int32_t served = 0; served < clients;) {
    ACCEL_RETURN_IF_ERROR(wait_for(listener.get(), POLLIN, deadline,
                                   fmt::format("waiting for rank connections ({} of {} came)", served, clients)));
    Fd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (client.get() < 0) continue;  // the connection went away before it was taken
    std::size_t sent = 0;
    while (sent < message.size()) {
      ACCEL_RETURN_IF_ERROR(wait_for(client.get(), POLLOUT, deadline, "sending the unique id"));
      const ssize_t n = ::send(client.get(), message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // that client is gone; another connection may replace it
      sent += static_cast<std::size_t>(n);
    }
    if (sent == message.size()) ++served;
  }
  return Status();
}

Result<UniqueId> fetch_unique_id(const std::string& host, std::uint16_t port, std::int32_t world_size,
                                 std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::string where = fmt::format("{}:{}", host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); error != 0) {
    return invalid_argument(fmt::format("resolving MASTER_ADDR '{}': {}", host, ::gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  Status last = deadline_exceeded(fmt::format("connecting to rank 0 at {}: timed out", where));
  while (Clock::now() < deadline) {
    for (const addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
      Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (fd.get() < 0 || ::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
        last = os_error(fmt::format("connecting to rank 0 at {}", where));
        continue;
      }
      std::size_t got = 0;
      // One more byte than a message, to tell an exact message from a longer stream.
      std::array<std::uint8_t, kUniqueIdMessageBytes + 1> in{};
      for (;;) {
        ACCEL_RETURN_IF_ERROR(
            wait_for(fd.get(), POLLIN, deadline, fmt::format("reading the unique id from {}", where)));
        const ssize_t n = ::recv(fd.get(), in.data() + got, in.size() - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return os_error(fmt::format("reading the unique id from {}", where));
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        if (got == in.size()) break;
      }
      return decode_unique_id_message(std::span<const std::uint8_t>(in.data(), got), world_size, where);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 may not be listening yet
  }
  return last;
}

}  // namespace accel::collective
