// accel::serve::DeadlineSocketStream — cpp-httplib's Stream over one accepted connection, for as long as it is
// open, whose reads are held to a deadline per request as well as to the per-read timeout.
//
// cpp-httplib's own stream bounds each read alone, so a client that sends a byte just inside that timeout keeps a
// thread of the pool for as long as it likes. Here every read of a request (its line, headers and body) waits at
// most until the deadline that arm() set when the request's first bytes were awaited; a read refused by it says so
// (timed_out()), so that the server can answer 408 and close. Writes keep the per-write timeout alone: the time a
// handler takes, and a response's size, are not the client's to answer for.
//
// One stream serves every request of its connection: bytes that arrived behind one request (a pipelined next one)
// stay buffered for it.
#pragma once

#include <httplib.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

namespace accel::serve {

class DeadlineSocketStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  DeadlineSocketStream(socket_t socket, Clock::duration read_timeout, Clock::duration write_timeout);

  // The next request must arrive whole (line, headers, body) within `budget` from now.
  void arm(Clock::duration budget);

  // Whether the next request's first bytes (or the peer's close) are there by `until`: buffered or on the socket.
  [[nodiscard]] bool readable_by(Clock::time_point until) const;

  // Whether a read of the current request failed (the deadline, the per-read timeout, an error, the peer's close):
  // what is left of the request, if anything, is still on its way, so the connection cannot carry another.
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  // Whether that failure was the deadline's.
  [[nodiscard]] bool timed_out() const noexcept { return timed_out_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return socket_; }

 private:
  // When a read that begins now must give up: at the deadline, or after the per-read timeout if that comes first.
  [[nodiscard]] Clock::time_point read_limit() const;
  [[nodiscard]] bool buffered() const noexcept { return next_ < end_; }

  socket_t socket_;
  Clock::duration read_timeout_;
  Clock::duration write_timeout_;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool failed_ = false;
  bool timed_out_ = false;
  // cpp-httplib reads a request's line and headers one byte at a time: one recv per byte would cost a system call
  // each, so reads are served from here.
  std::array<char, 4096> buffer_{};
  std::size_t next_ = 0;
  std::size_t end_ = 0;
};

}  // namespace accel::serve
