// What the collective family refuses before anything runs (counts, dtypes, roots, buffers, overlaps), a Group's
// encoding to an isolated worker, torchrun's environment parsed with each error named, and the unique id's TCP
// exchange over loopback between threads, a stray server included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>

#include "accel/core/byte_codec.hpp"
#include "accel/libs/collective/launcher.hpp"
#include "libs/collective/collective_operation.hpp"
#include "testing/status_matchers.hpp"

namespace accel::collective {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;

const Comm kComm{.id = 7, .ranks = 2, .rank = 1};
BufferHandle handle(std::uint32_t slot, DType dtype, std::uint64_t count) {
  return BufferHandle{.device = 1, .slot = slot, .dtype = dtype, .count = count};
}

Status check(const Collective& request) { return Operation<Collective>::validate(request).status(); }

TEST(CollectiveValidation, RefusesBadFields) {
  const BufferHandle a = handle(0, DType::f32, 64), b = handle(1, DType::f32, 64);
  EXPECT_THAT(check(all_reduce(kComm, a, b, 8, DType::f32, ReduceOp::sum)), IsOk());
  EXPECT_THAT(check(all_reduce(Comm{.id = 0, .ranks = 2}, a, b, 8, DType::f32, ReduceOp::sum)),
              StatusIs(Code::invalid_argument, "id is 0"));
  EXPECT_THAT(check(all_reduce(Comm{.id = 1, .ranks = 2, .rank = 2}, a, b, 8, DType::f32, ReduceOp::sum)),
              StatusIs(Code::invalid_argument, "rank 2 of a communicator of 2"));
  EXPECT_THAT(check(all_reduce(kComm, a, b, 8, DType::c64, ReduceOp::sum)), StatusIs(Code::not_supported, "c64"));
  EXPECT_THAT(check(all_reduce(kComm, a, b, 8, DType::c32, ReduceOp::sum)), StatusIs(Code::not_supported, "c32"));
  EXPECT_THAT(check(all_reduce(kComm, a, b, 8, static_cast<DType>(200), ReduceOp::sum)),
              StatusIs(Code::invalid_argument, "unknown dtype"));
  EXPECT_THAT(check(all_reduce(kComm, a, b, 8, DType::f32, static_cast<ReduceOp>(9))),
              StatusIs(Code::invalid_argument, "unknown op"));
  EXPECT_THAT(check(broadcast(kComm, a, b, 8, DType::f32, 2)), StatusIs(Code::invalid_argument, "root 2"));
  EXPECT_THAT(check(send(kComm, a, 8, DType::f32, -1)), StatusIs(Code::invalid_argument, "peer -1"));
  EXPECT_THAT(check(all_reduce(kComm, BufferHandle{}, b, 8, DType::f32, ReduceOp::sum)),
              StatusIs(Code::invalid_argument, "send is null"));
  EXPECT_THAT(check(all_reduce(kComm, a, a, std::uint64_t{1} << 60, DType::f32, ReduceOp::sum)),
              StatusIs(Code::invalid_argument, "too large"));
  // Broadcast's send is not read off the root, reduce's recv not written off it: null is fine there.
  EXPECT_THAT(check(broadcast(kComm, BufferHandle{}, b, 8, DType::f32, 0)), IsOk());
  EXPECT_THAT(check(reduce(kComm, a, BufferHandle{}, 8, DType::f32, ReduceOp::max, 0)), IsOk());
  EXPECT_THAT(check(reduce(kComm, a, BufferHandle{}, 8, DType::f32, ReduceOp::max, 1)),
              StatusIs(Code::invalid_argument, "recv is null"));
}

TEST(CollectiveValidation, InPlaceIsNcclsOtherOverlapsAreRefused) {
  const BufferHandle a = handle(0, DType::f32, 64), b = handle(1, DType::f32, 64);
  EXPECT_THAT(check(all_reduce(kComm, a, a, 8, DType::f32, ReduceOp::sum)), IsOk());
  EXPECT_THAT(check(all_gather(kComm, a, a, 8, DType::f32)), IsOk());  // the builder puts rank 1's input at 8
  EXPECT_THAT(check(reduce_scatter(kComm, a, a, 8, DType::f32, ReduceOp::sum)), IsOk());
  Collective shifted = all_reduce(kComm, a, a, 8, DType::f32, ReduceOp::sum);
  shifted.step.recv_offset = 4;
  EXPECT_THAT(check(shifted), StatusIs(Code::invalid_argument, "not in place"));
  Group clash{.comm = kComm, .steps = {recv(kComm, b, 8, DType::f32, 0).step, recv(kComm, b, 8, DType::f32, 0).step}};
  EXPECT_THAT(Operation<Group>::validate(clash).status(), StatusIs(Code::invalid_argument, "step 1 (recv)"));
  clash.steps[1].recv_offset = 8;
  EXPECT_THAT(Operation<Group>::validate(clash).status(), IsOk());
  EXPECT_THAT(Operation<Group>::validate(Group{.comm = kComm}).status(), StatusIs(Code::invalid_argument, "no steps"));
  EXPECT_THAT(Operation<InitComm>::validate(InitComm{.comm = kComm, .timeout_ms = 0}).status(),
              StatusIs(Code::invalid_argument, "timeout_ms is 0"));
}

TEST(CollectiveValidation, BufferSizesAndDTypesAreCheckedOnTheDevice) {
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  BufferHandle small = *device.ask(Allocate{.dtype = DType::f32, .count = 15}).wait();
  BufferHandle ints = *device.ask(Allocate{.dtype = DType::i32, .count = 64}).wait();
  // all_gather of 8 on 2 ranks writes 16.
  EXPECT_THAT(device.ask(all_gather(kComm, ints, small, 8, DType::f32)).wait().status(),
              StatusIs(Code::invalid_argument));
  EXPECT_THAT(device.ask(all_reduce(kComm, ints, ints, 8, DType::f32, ReduceOp::sum)).wait().status(),
              StatusIs(Code::invalid_argument));
  EXPECT_THAT(device.ask(all_reduce(kComm, ints, ints, 8, DType::i32, ReduceOp::sum)).wait().status(),
              StatusIs(Code::stale_handle, "no communicator 7"));
}

TEST(CollectiveValidation, AGroupCrossesEncoded) {
  const Group group{.comm = kComm,
                    .steps = {send(kComm, handle(0, DType::bf16, 8), 8, DType::bf16, 0).step,
                              recv(kComm, handle(1, DType::bf16, 8), 8, DType::bf16, 0).step}};
  ByteWriter out;
  Operation<Group>::encode(out, group);
  const std::vector<std::byte> bytes = out.take();
  ByteReader in(bytes);
  Result<Group> back = Operation<Group>::decode(in);
  ASSERT_THAT(back.status(), IsOk());
  EXPECT_EQ(back->comm, group.comm);
  ASSERT_EQ(back->steps.size(), 2u);
  EXPECT_EQ(back->steps[1].recv, group.steps[1].recv);
  ByteReader cut(std::span<const std::byte>(bytes).first(bytes.size() - 1));
  EXPECT_THAT(Operation<Group>::decode(cut).status(), StatusIs(Code::internal, "damaged"));
}

Result<LauncherEnv> parse(const std::map<std::string, std::string>& vars) {
  return parse_torchrun_env([&](const char* name) -> const char* {
    auto found = vars.find(name);
    return found == vars.end() ? nullptr : found->second.c_str();
  });
}

TEST(TorchrunEnv, ParsesAndNamesEachError) {
  std::map<std::string, std::string> vars{
      {"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
  Result<LauncherEnv> env = parse(vars);
  ASSERT_THAT(env.status(), IsOk());
  EXPECT_EQ(env->rank, 1);
  EXPECT_EQ(env->world_size, 2);
  EXPECT_EQ(env->bootstrap_port, 29501);
  vars["ACCEL_BOOTSTRAP_PORT"] = "31000";
  EXPECT_EQ(parse(vars)->bootstrap_port, 31000);
  const auto with = [&](const std::string& name, const char* value) {
    std::map<std::string, std::string> changed = vars;
    if (value == nullptr) {
      changed.erase(name);
    } else {
      changed[name] = value;
    }
    return parse(changed).status();
  };
  EXPECT_THAT(with("RANK", nullptr), StatusIs(Code::invalid_argument, "no RANK"));
  EXPECT_THAT(with("RANK", "2"), StatusIs(Code::invalid_argument, "RANK=2 is outside 0..1"));
  EXPECT_THAT(with("WORLD_SIZE", "two"), StatusIs(Code::invalid_argument, "WORLD_SIZE='two' is not an integer"));
  EXPECT_THAT(with("WORLD_SIZE", "0"), StatusIs(Code::invalid_argument, "WORLD_SIZE=0"));
  EXPECT_THAT(with("LOCAL_RANK", "1x"), StatusIs(Code::invalid_argument, "LOCAL_RANK='1x'"));
  EXPECT_THAT(with("MASTER_ADDR", ""), StatusIs(Code::invalid_argument, "no MASTER_ADDR"));
  EXPECT_THAT(with("MASTER_PORT", "70000"), StatusIs(Code::invalid_argument, "MASTER_PORT=70000"));
  EXPECT_THAT(with("ACCEL_BOOTSTRAP_PORT", "-3"), StatusIs(Code::invalid_argument, "ACCEL_BOOTSTRAP_PORT=-3"));
}

// A port nothing listens on now (the kernel's pick, released).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(UniqueIdExchange, RankZeroServesEveryRankOverLoopback) {
  UniqueId id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<std::uint8_t>(i * 7);
  const std::uint16_t port = free_port();
  std::vector<Result<UniqueId>> got(3, Result<UniqueId>(internal_error("not run")));
  std::vector<std::thread> ranks;
  for (std::size_t r = 0; r < got.size(); ++r) {  // they start before rank 0 listens, and retry
    ranks.emplace_back([&, r] { got[r] = fetch_unique_id("127.0.0.1", port, 4, std::chrono::seconds(10)); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(serve_unique_id(id, 4, port, 3, std::chrono::seconds(10)), IsOk());
  for (std::thread& t : ranks) t.join();
  for (const Result<UniqueId>& r : got) {
    ASSERT_THAT(r.status(), IsOk());
    EXPECT_EQ(*r, id);
  }
}

TEST(UniqueIdExchange, UntrustedRepliesAndSilenceAreNamedErrors) {
  const std::uint16_t port = free_port();
  std::thread wrong_size([&] { (void)serve_unique_id(UniqueId{}, 3, port, 1, std::chrono::seconds(10)); });
  EXPECT_THAT(fetch_unique_id("127.0.0.1", port, 2, std::chrono::seconds(10)).status(),
              StatusIs(Code::invalid_argument, "serves a world of 3 ranks"));
  wrong_size.join();
  // A server that is not ours: a short greeting.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::uint16_t stray_port = free_port();
  address.sin_port = htons(stray_port);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::listen(listener, 1);
  std::thread stray([&] {
    const int client = ::accept(listener, nullptr, nullptr);
    (void)!::write(client, "HTTP/1.1 400\r\n\r\n", 16);
    ::close(client);
  });
  EXPECT_THAT(fetch_unique_id("127.0.0.1", stray_port, 2, std::chrono::seconds(10)).status(),
              StatusIs(Code::invalid_argument, "sent 16 bytes"));
  stray.join();
  ::close(listener);
  EXPECT_THAT(fetch_unique_id("127.0.0.1", free_port(), 2, std::chrono::milliseconds(200)).status(),
              StatusIs(Code::unavailable, "connecting to rank 0"));
  EXPECT_THAT(serve_unique_id(UniqueId{}, 2, free_port(), 1, std::chrono::milliseconds(100)),
              StatusIs(Code::deadline_exceeded, "0 of 1 came"));
}

}  // namespace
}  // namespace accel::collective
