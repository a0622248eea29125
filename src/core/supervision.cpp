#include "accel/core/supervision.hpp"

namespace accel {

std::string_view to_string(Directive directive) noexcept {
  switch (directive) {
    case Directive::resume: return "resume";
    case Directive::restart: return "restart";
    case Directive::stop: return "stop";
    case Directive::escalate: return "escalate";
  }
  return "unknown_directive";
}

SupervisionPolicy::SupervisionPolicy() noexcept {
  directives_.fill(Directive::resume);
  on(Code::internal, Directive::restart);
  on(Code::context_lost, Directive::stop);
}

}  // namespace accel
