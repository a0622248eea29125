// Every collective, every dtype, in place and out of place, on a world of communicators (one per device, each rank
// sending its request before any waits), checked against integer arithmetic on fresh random data. The CPU test
// runs it on a CPU world, the GPU tests on NCCL.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collective_testing.hpp"
#include "testing/status_matchers.hpp"

namespace accel::collective::testing {

struct RankData {
  std::vector<double> send;
  BufferHandle send_buffer;
  BufferHandle recv_buffer;
};

// Sends `make(rank)` on every rank, then waits for all; every status must be OK.
template <class Make>
void run_on_all(const std::vector<Communicator>& comms, Make&& make) {
  std::vector<Future<Done>> pending;
  for (const Communicator& comm : comms) pending.push_back(comm.ask(make(comm)));
  for (Future<Done>& done : pending) ASSERT_THAT(done.wait().status(), accel::testing::IsOk());
}

// One step kind on every rank with fresh data; compares each rank's recv with `expect(rank, sends)`.
template <class MakeStep, class Expect>
void check_step(const std::vector<Communicator>& comms, std::mt19937& rng, DType dtype, std::size_t send_count,
                std::size_t recv_count, bool in_place, MakeStep&& make_step, Expect&& expect) {
  std::vector<std::vector<double>> sends;
  std::vector<RankData> data(comms.size());
  for (std::size_t r = 0; r < comms.size(); ++r) {
    const Device& device = comms[r].device();
    // In place, one buffer holds both: the larger of the two extents (all_gather's input sits at its part).
    std::vector<double> values = random_values(rng, dtype, std::max(send_count, recv_count));
    sends.push_back(values);
    Result<BufferHandle> send = upload(device, dtype, values);
    ASSERT_THAT(send.status(), accel::testing::IsOk());
    data[r].send_buffer = *send;
    if (in_place) {
      data[r].recv_buffer = *send;
    } else {
      Result<BufferHandle> recv = upload(device, dtype, std::vector<double>(recv_count, 0.0));
      ASSERT_THAT(recv.status(), accel::testing::IsOk());
      data[r].recv_buffer = *recv;
    }
  }
  run_on_all(comms, [&](const Communicator& comm) {
    const RankData& d = data[static_cast<std::size_t>(comm.rank())];
    return make_step(comm.comm(), d.send_buffer, d.recv_buffer);
  });
  for (std::size_t r = 0; r < comms.size(); ++r) {
    Result<std::vector<double>> got = download(comms[r].device(), data[r].recv_buffer);
    ASSERT_THAT(got.status(), accel::testing::IsOk());
    const std::vector<double> want = expect(static_cast<std::int32_t>(r), sends);
    got->resize(std::min(got->size(), want.size()));
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ((*got)[i], want[i]) << "rank " << r << " element " << i;
    }
  }
}

inline void check_every_collective(const std::vector<Communicator>& comms, std::mt19937& rng, DType dtype) {
  const std::size_t n = 37;
  const auto ranks = comms.size();
  const auto first = [&](const std::vector<std::vector<double>>& sends, std::size_t count) {
    std::vector<std::vector<double>> cut;
    for (const auto& s : sends) cut.push_back(part(s, 0, count));
    return cut;
  };
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(::testing::Message() << to_string(dtype) << (in_place ? " in place" : " out of place"));
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      SCOPED_TRACE(to_string(op));
      check_step(
          comms, rng, dtype, n, n, in_place,
          [&](Comm c, BufferHandle s, BufferHandle r) { return all_reduce(c, s, r, n, dtype, op); },
          [&](std::int32_t, const auto& sends) { return expected(dtype, op, first(sends, n)); });
      check_step(
          comms, rng, dtype, n * ranks, n, in_place,
          [&](Comm c, BufferHandle s, BufferHandle r) { return reduce_scatter(c, s, r, n, dtype, op); },
          [&](std::int32_t rank, const auto& sends) {
            std::vector<std::vector<double>> parts;
            for (const auto& s : sends) parts.push_back(part(s, static_cast<std::size_t>(rank) * n, n));
            std::vector<double> want = expected(dtype, op, parts);
            if (in_place) {  // the output is this rank's part of the buffer; the rest keeps its input
              std::vector<double> whole = sends[static_cast<std::size_t>(rank)];
              std::copy(want.begin(), want.end(), whole.begin() + rank * static_cast<std::ptrdiff_t>(n));
              return whole;
            }
            return want;
          });
      check_step(
          comms, rng, dtype, n, n, in_place,
          [&](Comm c, BufferHandle s, BufferHandle r) { return reduce(c, s, r, n, dtype, op, 1 % c.ranks); },
          [&](std::int32_t rank, const auto& sends) {
            if (rank == 1 % static_cast<std::int32_t>(ranks)) return expected(dtype, op, first(sends, n));
            return in_place ? part(sends[static_cast<std::size_t>(rank)], 0, n) : std::vector<double>(n, 0.0);
          });
    }
    check_step(
        comms, rng, dtype, n, n * ranks, in_place,
        [&](Comm c, BufferHandle s, BufferHandle r) { return all_gather(c, s, r, n, dtype); },
        [&](std::int32_t, const auto& sends) {
          std::vector<double> want;
          for (std::size_t r = 0; r < ranks; ++r) {
            const std::vector<double> mine = part(sends[r], in_place ? r * n : 0, n);
            want.insert(want.end(), mine.begin(), mine.end());
          }
          return want;
        });
    check_step(
        comms, rng, dtype, n, n, in_place,
        [&](Comm c, BufferHandle s, BufferHandle r) { return broadcast(c, s, r, n, dtype, 0); },
        [&](std::int32_t, const auto& sends) { return part(sends[0], 0, n); });
  }
  // A ring exchange as one group: each rank sends to the next and receives from the previous.
  check_step(
      comms, rng, dtype, n, n, false,
      [&](Comm c, BufferHandle s, BufferHandle r) {
        const std::int32_t next = (c.rank + 1) % c.ranks, previous = (c.rank + c.ranks - 1) % c.ranks;
        return Group{.comm = c, .steps = {send(c, s, n, dtype, next).step, recv(c, r, n, dtype, previous).step}};
      },
      [&](std::int32_t rank, const auto& sends) {
        return part(sends[static_cast<std::size_t>((rank + static_cast<std::int32_t>(ranks) - 1) %
                                                   static_cast<std::int32_t>(ranks))],
                    0, n);
      });
}

}  // namespace accel::collective::testing
