// The worker process of an isolated device: maps the channel it inherited, builds an in-process device from
// the WorkerConfig in it, and serves requests until the client asks it to stop or goes away. A sticky fault
// makes it answer what it took, then exit with kExitContextLost so that the client replaces it.
#pragma once

namespace accel::device::isolated {

// The whole of accel-worker's main().
int run_worker(int argc, char** argv);

}  // namespace accel::device::isolated
