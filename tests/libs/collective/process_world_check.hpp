// One rank's part of checking a world of one process per GPU (started as torchrun would, or by mpirun): every
// collective the family has, against integer arithmetic on values that every process can compute for every rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "collective_testing.hpp"

namespace accel::collective::testing {

// Values every process can compute for every rank from one seed: each rank uploads its own.
inline std::vector<double> values_of(DType dtype, std::int32_t rank, std::size_t n) {
  std::mt19937 rng{1234u + static_cast<unsigned>(rank)};
  return random_values(rng, dtype, n);
}

inline bool is_fp8(DType dtype) { return dtype == DType::fp8_e4m3 || dtype == DType::fp8_e5m2; }

// Every reduction (an fp8 average must be refused: NCCL does not take it), all-gather, reduce-scatter,
// broadcast from the last rank, and a ring of send/recv as one group. Empty when all passed, else what failed.
inline std::string check_across_processes(const Communicator& comm, DType dtype) {
  const std::size_t n = 1000;
  const auto ranks = static_cast<std::size_t>(comm.ranks());
  const auto me = static_cast<std::size_t>(comm.rank());
  std::vector<std::vector<double>> all;
  for (std::size_t r = 0; r < ranks; ++r) all.push_back(values_of(dtype, static_cast<std::int32_t>(r), n));
  const Device& device = comm.device();
  const auto name = [&](std::string_view what) { return fmt::format("{} {}", what, to_string(dtype)); };
  const auto fetch = [&](const BufferHandle& buffer, std::vector<double>& into) {
    Result<std::vector<double>> got = download(device, buffer);
    if (got.ok()) into = std::move(*got);
    return got.ok();
  };
  std::vector<double> got;
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
    Result<BufferHandle> x = upload(device, dtype, all[me]);
    if (!x.ok()) return name("upload");
    const Status done = comm.ask(all_reduce(comm.comm(), *x, *x, n, dtype, op)).wait().status();
    if (is_fp8(dtype) && op == ReduceOp::avg) {
      if (done.code() != Code::not_supported) return name("all_reduce avg was not refused");
      continue;
    }
    if (!done.ok()) return name(fmt::format("all_reduce {}: {}", to_string(op), done.message()));
    if (!fetch(*x, got) || got != expected(dtype, op, all)) return name(fmt::format("all_reduce {}", to_string(op)));
  }
  Result<BufferHandle> x = upload(device, dtype, all[me]);
  Result<BufferHandle> wide = upload(device, dtype, std::vector<double>(ranks * n, 0.0));
  if (!x.ok() || !wide.ok()) return name("upload");
  if (!comm.ask(all_gather(comm.comm(), *x, *wide, n, dtype)).wait().ok()) return name("all_gather");
  std::vector<double> want;
  for (const std::vector<double>& mine : all) want.insert(want.end(), mine.begin(), mine.end());
  if (!fetch(*wide, got) || got != want) return name("all_gather result");
  // Every rank's input is the gathered vector; its block `me` of the sum comes back.
  const std::vector<std::vector<double>> inputs(ranks, want);
  if (!comm.ask(reduce_scatter(comm.comm(), *wide, *x, n, dtype, ReduceOp::sum)).wait().ok())
    return name("reduce_scatter");
  if (!fetch(*x, got) || got != part(expected(dtype, ReduceOp::sum, inputs), me * n, n))
    return name("reduce_scatter result");
  Result<BufferHandle> y = upload(device, dtype, all[me]);
  if (!y.ok()) return name("upload");
  const auto root = static_cast<std::int32_t>(ranks - 1);
  if (!comm.ask(broadcast(comm.comm(), *y, *y, n, dtype, root)).wait().ok()) return name("broadcast");
  if (!fetch(*y, got) || got != all[ranks - 1]) return name("broadcast result");
  if (ranks > 1) {
    const auto next = static_cast<std::int32_t>((me + 1) % ranks);
    const auto previous = static_cast<std::int32_t>((me + ranks - 1) % ranks);
    Result<BufferHandle> mine = upload(device, dtype, all[me]);
    if (!mine.ok()) return name("upload");
    if (!comm.group({send(comm.comm(), *mine, n, dtype, next).step, recv(comm.comm(), *y, n, dtype, previous).step})
             .wait()
             .ok())
      return name("send/recv");
    if (!fetch(*y, got) || got != all[static_cast<std::size_t>(previous)]) return name("send/recv result");
  }
  return {};
}

}  // namespace accel::collective::testing
