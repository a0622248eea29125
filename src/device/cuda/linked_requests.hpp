// A CUDA stream's linked bursts: requests of one type, sent one after another, run as few launches as their
// contract's links allow (CudaOperation::Link, operation/cuda_operation.hpp).
//
// Note [Linked bursts]
// A caller that sends small requests one after another without waiting (pipelined) finds the stream's thread
// launching one kernel a request, and a launch costs that thread 2.7-4.9 µs of an H100's host (PERFORMANCE.md §106):
// more than the kernel of a small request takes. A recording already runs consecutive steps of one contract as
// one run_linked where the contract links them; a stream does the same with a burst. When it takes a request whose
// contract links steps, it also takes the requests of that type queued right behind it
// (Protocol::Handler::take_queued), up to what one burst holds (kMostHeldReplies), and enqueues them together:
// each is validated, planned, resolved and ordered as alone, in order, under one hold of the buffers' lock; the runs
// of consecutive ones with links go to one run_linked each, the rest run alone; one completion mark covers them
// all. Nothing waits for requests to come: a request with nothing of its type queued behind it runs alone, as
// before, so a request's latency is unchanged. Each still gets its own reply and its own error, which names it.
//
// Taking queued requests early is safe because until the stream takes a request, no other stream sees it: the
// requests are ordered against the buffers' other users in the order they came, and only the launches are
// fewer. run_linked leaves what the runs would have (the contract's rule), so the outputs do not change either.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "accel/core/actor.hpp"
#include "device/cuda/cuda_stream.hpp"

namespace accel::device::cuda {

template <class Request>
Status CudaStream::dispatch_linked(Request& request, Promise<Done>& reply) {
  std::optional<Envelope<Request>> next;
  if (held_.size() + 1 >= kMostHeldReplies || !(next = this->template take_queued<Request>()))
    return complete_later(request, reply);
  std::vector<Envelope<Request>> behind;
  behind.reserve(kMostHeldReplies - held_.size() - 1);
  do {
    behind.push_back(std::move(*next));
  } while (held_.size() + 1 + behind.size() < kMostHeldReplies && (next = this->template take_queued<Request>()));
  std::vector<Request*> requests{&request};
  requests.reserve(behind.size() + 1);
  for (Envelope<Request>& envelope : behind) requests.push_back(&envelope.request);
  std::vector<Result<Submitted>> submitted = enqueue_linked<Request>(requests);
  Status first_failure;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Promise<Done>& answer = i == 0 ? reply : behind[i - 1].reply;
    if (!submitted[i].ok()) {
      answer.set(submitted[i].status());
      if (first_failure.ok()) first_failure = submitted[i].status();
      continue;
    }
    held_.push_back(DeferredReply{std::move(*submitted[i]), std::move(answer)});
  }
  if (Status answered = answer_held_if_due(); !answered.ok() && first_failure.ok()) first_failure = answered;
  return first_failure;
}

template <class Request>
std::vector<Result<Submitted>> CudaStream::enqueue_linked(std::span<Request* const> requests) {
  using CudaOp = CudaOperation<Request>;
  using Link = typename CudaOp::Link;
  struct Step {
    PreparedRequest<Request> prepared;
    std::vector<BufferView> views;
    std::uint64_t write_version = 0;
    std::optional<Link> link;
    Submitted submitted;
  };
  const std::size_t count = requests.size();
  std::vector<std::optional<Step>> steps(count);
  std::vector<Status> failed(count);
  const auto fail = [&](std::size_t i, const Status& status) {
    failed[i] = named_for(Request::kName, status);
    steps[i].reset();
  };
  for (std::size_t i = 0; i < count; ++i) {
    Result<PreparedRequest<Request>> prepared = prepare(*requests[i]);
    if (prepared.ok())
      steps[i].emplace(Step{.prepared = std::move(*prepared)});
    else
      fail(i, prepared.status());
  }
  std::lock_guard lock(context_->buffers_mutex());
  // Resolved and ordered one by one, in order, as enqueue_unnamed and ordered() do; what each writes gets its
  // version before the next is resolved.
  for (std::size_t i = 0; i < count; ++i) {
    if (!steps[i]) continue;
    Step& step = *steps[i];
    const Status ordered_step = [&]() -> Status {
      ACCEL_ASSIGN_OR_RETURN(step.views, resolve_locked(step.prepared.operands));
      step.write_version = context_->new_write_version();
      ACCEL_RETURN_IF_ERROR(order_before_work(step.prepared.uses, step.write_version));
      if (CudaOp::workspace_bytes(step.prepared.plan) == 0 && step.prepared.host_result_bytes == 0)
        step.link = CudaOp::link(*requests[i], step.prepared.checked, step.prepared.plan, step.views);
      return Status();
    }();
    if (!ordered_step.ok()) fail(i, ordered_step);
  }
  for (std::size_t first = 0; first < count;) {
    if (!steps[first]) {
      ++first;
      continue;
    }
    std::vector<Link> links;
    std::size_t end = first;
    for (; end < count && steps[end] && steps[end]->link; ++end) links.push_back(*steps[end]->link);
    if (links.size() < 2) {
      end = first + 1;
      Step& step = *steps[first];
      Result<Submitted> ran = run_prepared(*requests[first], step.prepared, step.views, step.write_version);
      if (ran.ok())
        step.submitted = std::move(*ran);
      else
        fail(first, ran.status());
    } else {
      CudaRun run{.target = *this};
      if (const Status ran = CudaOp::run_linked(links, run); !ran.ok())
        for (std::size_t i = first; i < end; ++i) fail(i, ran);
    }
    first = end;
  }
  Result<EventRef> mark = completion_mark();
  std::vector<Result<Submitted>> results;
  results.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (steps[i] && !mark.ok()) fail(i, mark.status());
    if (!steps[i]) {
      results.emplace_back(failed[i]);
      continue;
    }
    order_after_work(steps[i]->prepared.uses, *mark);
    steps[i]->submitted.event = *mark;
    results.emplace_back(std::move(steps[i]->submitted));
  }
  return results;
}

}  // namespace accel::device::cuda
