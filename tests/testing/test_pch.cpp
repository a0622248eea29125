// The source the tests' precompiled header is built with (accel_test_pch in tests/CMakeLists.txt); the header
// itself is gtest, gmock and accel/device/device.hpp, named there.
