#include "device/isolated/worker.hpp"

int main(int argc, char** argv) { return accel::device::isolated::run_worker(argc, argv); }
