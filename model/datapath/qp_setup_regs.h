// model/datapath: the register map, states and status codes of the QP-setup
// offload (rtl/qp_setup/qp_setup_fsm.sv, seed 001's queue-management
// block). The RTL's header comment is the full description; this header is
// its C++ image, shared by the reference model (qp_setup_model.h), the
// system wrapper (model/qp_setup/qp_setup_fsm.h), the host driver and the
// tests. Plain C++17, no SystemC.
//
// All registers are 32 bits, at byte offsets in the block's 4 KiB window.
// The host reaches the window at kMmioBase in the node's MMIO space (BAR0),
// above ERNIC's register window (256 KiB in the 3.1 layout, 2 MiB in 4.x).
#pragma once
#include <cstdint>

namespace ernic::qps {

// ---- MMIO placement ---------------------------------------------------------
constexpr uint32_t kMmioBase = 0x0040'0000;  // BAR0 offset of the block's window
constexpr uint32_t kWindowBytes = 0x1000;

// ---- registers (byte offsets in the window) ---------------------------------
namespace reg {
// Command and QP parameters (seed 001: 0x00 QP control, 0x08..0x14 the
// destination; the PSNs have their own words so that 24 bits fit).
constexpr uint32_t QPCTRL = 0x00;       // [31:24] opcode, [23:16] transport, [15:0] local QPN
constexpr uint32_t DESTQP = 0x04;       // remote QPN (24 bits used)
constexpr uint32_t REMOTE_IP = 0x08;    // remote IPv4 (IPDESADDR1i)
constexpr uint32_t UDP_PORT = 0x0C;     // [15:0] destination UDP port (4791)
constexpr uint32_t MAC_LSB = 0x10;      // remote MAC bytes 2..5 (MACDESADDLSBi)
constexpr uint32_t MAC_MSB = 0x14;      // [15:0] remote MAC bytes 0..1 (MACDESADDMSBi)
constexpr uint32_t SQ_PSN = 0x18;       // first PSN sent (SQPSNi); 32 bits stored
constexpr uint32_t EXP_PSN = 0x1C;      // first PSN expected (LSTRQREQi = 0x0A << 24 | EXP_PSN - 1)
constexpr uint32_t CMD = 0x20;          // WO: bit 0 = execute QPCTRL's opcode
constexpr uint32_t STATUS = 0x24;       // RO: [7:0] code, [10:8] state, [16] busy
constexpr uint32_t LINK_TIMEOUT = 0x28; // cycles CMAC_INIT waits for cmac_link_up
constexpr uint32_t PD = 0x2C;           // [23:0] PDi
// Pool and queue geometry (locked while a command runs or a slot is held).
constexpr uint32_t POOL_BASE_LO = 0x30; // window base [31:12]
constexpr uint32_t POOL_BASE_HI = 0x34; // window base [63:32]
constexpr uint32_t SLOT_BYTES = 0x38;   // [31:12] bytes per slot
constexpr uint32_t POOL_COUNT = 0x3C;   // [7:0] N (clamped to POOL_MAX), [15:8] RO POOL_MAX
constexpr uint32_t QDEPTH = 0x40;       // QDEPTHi: [15:0] SQ = CQ depth, [31:16] RQ depth
constexpr uint32_t QPCONF = 0x44;       // QPCONFi template (bits 0, 6, 7 cleared; enable set last)
constexpr uint32_t QPADVCONF = 0x48;    // QPADVCONFi
constexpr uint32_t TIMEOUTCONF = 0x4C;  // TIMEOUTCONFi
constexpr uint32_t MAX_QPN = 0x50;      // [15:0] highest valid QPN (C_NUM_QP)
constexpr uint32_t ERNIC_CONF = 0x54;   // [0] ERNIC layout: 0 = 3.1, 1 = 4.x
// Read-back of an allocation.
constexpr uint32_t INFO_QPN = 0x58;     // [15:0] QP shown by 0x60..0x88 (set by every CMD)
constexpr uint32_t POOL_STATUS = 0x5C;  // RO: [7:0] free slots, [15:8] allocated
constexpr uint32_t INFO_SLOT = 0x60;    // RO: [31] INFO_QPN holds a slot, [7:0] index
constexpr uint32_t INFO_SQ_LO = 0x64, INFO_SQ_HI = 0x68;
constexpr uint32_t INFO_CQ_LO = 0x6C, INFO_CQ_HI = 0x70;
constexpr uint32_t INFO_RQ_LO = 0x74, INFO_RQ_HI = 0x78;
constexpr uint32_t INFO_CQDB_LO = 0x7C, INFO_CQDB_HI = 0x80;  // CQDBADDi
constexpr uint32_t INFO_RQDB_LO = 0x84, INFO_RQDB_HI = 0x88;  // RQWPTRDBADDi
constexpr uint32_t kLast = INFO_RQDB_HI;  // words above read 0
}  // namespace reg

// STATUS fields.
constexpr uint32_t kStatusCodeMask = 0xFF, kStatusStateShift = 8, kStatusBusy = 1u << 16;

// QPCTRL fields.
constexpr uint8_t kOpCreate = 0x01, kOpRelease = 0x02;
constexpr uint8_t kTransportRoceV2 = 0x06;
constexpr uint16_t kRoceV2Port = 4791;
constexpr uint32_t qpctrl(uint8_t opcode, uint16_t qpn, uint8_t transport = kTransportRoceV2) {
  return uint32_t(opcode) << 24 | uint32_t(transport) << 16 | qpn;
}

// The Verilated instance's parameters (rtl/CMakeLists.txt: defaults).
constexpr uint32_t kPoolMax = 16;
constexpr uint32_t kLinkTimeoutReset = 2000;
constexpr uint16_t kMaxQpnReset = 8;
// Reset values of the geometry and QP-template registers.
constexpr uint32_t kQdepthReset = 64 | 16u << 16;
constexpr uint32_t kQpconfReset = 0x0010'0430;       // RQ element 4096 B, PMTU 4096, CQE write, HWHS off
constexpr uint32_t kQpadvconfReset = 0xFFFF'4000;    // P_Key 0xFFFF, TTL 64
constexpr uint32_t kTimeoutconfReset = 0x001F'1B0E;  // ACK timeout 14, retry 3, RNR retry 3, RNR timer 0x1F

// ---- states and status codes ----------------------------------------------------
enum class State : uint8_t { Idle = 0, RegCheck = 1, ResAlloc = 2, CmacInit = 3, Ready = 4 };
const char* state_name(State s);         // "IDLE", "REG_CHECK", ...

namespace status {
constexpr uint8_t kNone = 0x00;          // no command finished yet, or one is running
constexpr uint8_t kSuccess = 0x17;
constexpr uint8_t kQpnRange = 0x01;      // QPN out of range (or release of a QP not set up here)
constexpr uint8_t kPoolExhausted = 0x05; // no free slot, or the slot cannot hold the queues
constexpr uint8_t kPsnOrActive = 0x0B;   // PSN above 0xFFFFFF, or the QPN already active
constexpr uint8_t kLinkTimeout = 0x13;   // CMAC link not up within LINK_TIMEOUT cycles
constexpr uint8_t kBadCommand = 0x02;    // opcode, transport or UDP port unsupported (not seed 001)
}  // namespace status
const char* status_name(uint8_t code);   // "success", "QPN out of range", ...

// ---- slot geometry ----------------------------------------------------------------
// Offsets inside one pool slot for the queue sizes of QDEPTH and QPCONF.
struct SlotLayout {
  uint64_t cq_off = 0;    // SQ at 0: sq_depth * 64 B; CQ after it: sq_depth * 4 B
  uint64_t db_off = 0;    // next 64-byte boundary: CQ head mirror at +0, RQ write pointer at +4
  uint64_t rq_off = 0;    // next 4 KiB boundary after the 64 doorbell bytes
  uint64_t need = 0;      // bytes the slot must have: rq_off + rq_depth * element bytes
  bool ok = false;        // need <= slot bytes and no depth or element size is 0
};
inline SlotLayout slot_layout(uint32_t qdepth, uint32_t qpconf, uint64_t slot_bytes) {
  SlotLayout l;
  const uint64_t sq_depth = qdepth & 0xFFFF, rq_depth = qdepth >> 16;
  const uint64_t elem = uint64_t(qpconf >> 16) * 256;
  l.cq_off = sq_depth * 64;
  l.db_off = (l.cq_off + sq_depth * 4 + 63) / 64 * 64;
  l.rq_off = (l.db_off + 64 + 4095) / 4096 * 4096;
  l.need = l.rq_off + rq_depth * elem;
  l.ok = sq_depth && rq_depth && elem && l.need <= slot_bytes;
  return l;
}

}  // namespace ernic::qps
