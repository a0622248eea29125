#include "serve/deadline_http_server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

#include "serve/deadline_socket_stream.hpp"

namespace accel::serve {
namespace {

using Clock = DeadlineHttpServer::Clock;

// How often a connection idle between requests looks whether the server is stopping, so that stop() closes it
// within this rather than after the whole keep-alive timeout.
constexpr Clock::duration kStopCheck = std::chrono::milliseconds(100);

// The stream of the connection this thread serves: cpp-httplib serves a connection from its first request to its
// close on one thread of its pool, and calls the error handler there with no word of the connection.
thread_local const DeadlineSocketStream* serving = nullptr;
thread_local Clock::time_point began{};

Clock::duration timeout(time_t seconds, time_t microseconds) {
  return std::chrono::seconds(seconds) + std::chrono::microseconds(microseconds);
}

}  // namespace

bool DeadlineHttpServer::request_timed_out() { return serving != nullptr && serving->timed_out(); }

DeadlineHttpServer::Clock::time_point DeadlineHttpServer::request_began() { return began; }

bool DeadlineHttpServer::await_request(const DeadlineSocketStream& stream) const {
  const Clock::time_point idle_until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
  for (;;) {
    if (svr_sock_ == INVALID_SOCKET) return false;
    if (stream.readable_by(std::min(idle_until, Clock::now() + kStopCheck))) return true;
    if (Clock::now() >= idle_until) return false;
  }
}

bool DeadlineHttpServer::process_and_close_socket(socket_t socket) {
  DeadlineSocketStream stream(socket, timeout(read_timeout_sec_, read_timeout_usec_),
                              timeout(write_timeout_sec_, write_timeout_usec_));
  serving = &stream;
  bool answered = false;
  for (std::size_t left = keep_alive_max_count_; left > 0 && await_request(stream); --left) {
    began = Clock::now();
    stream.arm(request_timeout_);
    bool connection_closed = false;
    // The last request a connection may carry is answered "Connection: close".
    answered = process_request(stream, left == 1, connection_closed, nullptr);
    if (!answered || connection_closed || stream.failed()) break;
  }
  serving = nullptr;
  began = {};
  ::shutdown(socket, SHUT_RDWR);
  ::close(socket);
  return answered;
}

}  // namespace accel::serve
