// sc_main for GoogleTest binaries that use SystemC: libsystemc supplies
// main() and calls sc_main, and a SystemC kernel elaborates once per
// process, so each test of such a binary is run in its own process
// (gtest_discover_tests + --gtest_filter).
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
