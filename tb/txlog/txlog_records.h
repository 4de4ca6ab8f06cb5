// tb/txlog: the records the transaction log tests write (FrameFields of
// a WRITE middle, an ACK, a CM MAD, a non-RoCE frame) and their files
// (tmp_path, slurp, lines_of); shared by test_txlog.cpp and
// test_txlog_view.cpp.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

#include "model/trace/txlog.h"
#include "tb/common/file_util.h"

namespace ernic::test {

inline std::string tmp_path(const std::string& name) {
  return testing::TempDir() + "txlog_" + std::to_string(::getpid()) + "_" + name + ".jsonl";
}


inline FrameFields write_middle() {
  FrameFields f;
  f.len = 4154;
  f.roce = true;
  f.opcode = 0x07;
  f.opname = "RC_WRITE_MIDDLE";
  f.psn = 0xedc9a1;
  f.dest_qp = 3;
  f.ack_req = false;
  f.src = "192.168.1.1";
  f.dst = "192.168.1.2";
  return f;
}

inline FrameFields ack(uint32_t psn) {
  FrameFields f;
  f.len = 62;
  f.roce = true;
  f.opcode = 0x11;
  f.opname = "RC_ACK";
  f.psn = psn;
  f.dest_qp = 2;
  f.ack_req = false;
  f.syndrome = 0x1f;
  f.msn = 1;
  f.src = "192.168.1.2";
  f.dst = "192.168.1.1";
  return f;
}

inline FrameFields cm_mad() {
  FrameFields f;
  f.len = 318;
  f.roce = true;
  f.opcode = 0x64;
  f.opname = "UD_SEND_ONLY";
  f.psn = 0;
  f.dest_qp = 1;
  f.ack_req = true;
  f.mad = "ConnectRequest";
  f.src = "192.168.1.1";
  f.dst = "192.168.1.2";
  return f;
}

inline FrameFields non_roce() {
  FrameFields f;
  f.len = 60;
  f.roce = false;
  f.opcode = 0x11;  // ignored: not RoCE
  f.opname = "RC_ACK";
  f.psn = 5;
  f.syndrome = 1;
  f.msn = 2;
  f.mad = "X";
  return f;
}

}  // namespace ernic::test
