#include "model/system/assumptions.h"

namespace ernic {

const std::vector<Assumption>& assumptions() {
  static const std::vector<Assumption> v = {
      {"A-CLK-1", "The CMAC clock (322.265625 MHz) is simulated with a 3103 ps period.",
       "SystemC's 1 ps resolution cannot represent 3103.03 ps; the clock runs about 9.8 ppm fast."},
      {"A-CLK-2", "Clock edges of every domain are at k * period from time 0; domains are unrelated in phase only through their periods.",
       "PG332 requires the AXI and AXI-Lite clocks to be synchronous; CMAC clocks are asynchronous to them."},
      {"A-AXIL-1", "An AXI4-Lite write takes 2 core cycles (AW+W handshake, B response), a read 3 (AR, one wait cycle, R); PCIe MMIO flight time is 0 until the PCIe model exists.",
       "PG332 publishes no register-access latency; the slave is always ready."},
      {"A-DMA-1", "A DMA read costs 100 core cycles (500 ns at 200 MHz) to the first data, then one 64-byte beat a cycle; payload reads after the first packet of a WQE stream without the latency.",
       "A typical PCIe Gen3 read round trip; PG332 gives no figure. A PCIe link model is to replace this."},
      {"A-DMA-2", "DMA writes are posted: the data is in host memory when the last beat is issued; writes of one master land in issue order.",
       "AXI4 ordering for one ID; PG332's masters use a 1-bit ID."},
      {"A-ERNIC-1", "The QP manager sees an SQPIi doorbell 2 core cycles after the AXI4-Lite write; WQE decode takes 2 cycles and each packet's header build 2 cycles; RX parse and validation 4 cycles; an ACK build 2 cycles.",
       "PG332 publishes no internal latency."},
      {"A-ERNIC-2", "The requester sets AckReq on the last packet of every message only.",
       "PG332 does not say when ERNIC sets AckReq; IBTA requires it at least on the last packet."},
      {"A-ERNIC-3", "ACKs carry AETH syndrome 0x1F (ACK, credit count 'invalid'): ERNIC advertises no end-to-end credits.",
       "PG332 does not document the credit field; ERNIC has no credit-based flow control."},
      {"A-ERNIC-4", "Outgoing RC packets use IPv4 TTL = QPADVCONFi[15:8] (64 when 0), TOS = QPADVCONFi[5:0] << 2, identification 0 with DF set, P_Key = QPADVCONFi[31:16] (0xFFFF when 0).",
       "PG332 names the fields but not the defaults or the IP identification."},
      {"A-ERNIC-5", "A WQE with an illegal opcode raises INTSTS[5] and is consumed without a packet or a CQE.",
       "PG332 names the interrupt but not what becomes of the WQE."},
      {"A-ERNIC-6", "QP1 SENDs complete (CQE) when the frame has been handed to the TX datapath; CQHEADi and its CQDBADDi mirror count completions even when QPCONFi[5] (CQE write) is 0.",
       "QP1 is UD: no ACK ever comes; PG332 ties only the CQE write to QPCONFi[5]."},
      {"A-ERNIC-7", "An incoming RETH whose [VA, VA+len) lies outside the MR gives fatal code 0x16 (RETH DMA length); PD, key byte and access failures give 0x15. A remote-access NAK is sent in both cases.",
       "PG332's fatal-code table does not say which code a bounds failure takes."},
      {"A-ERNIC-8", "A frame is accepted only if the MAC and IPv4 destination match the node and the source matches the QP's remote; the ICRC is checked over the IP length.",
       "PG332 Table 2-3 lists the checks; their order is not given."},
      {"A-ERNIC-11", "An incoming READ is answered by the RX handler itself: it reads the payload through wqe_proc_top_m_axi (DMA read latency for the first response, streaming after), builds each response header in 2 core cycles and queues it for TX, waiting while the TX queue is full; responses carry AckReq clear and, on FIRST/LAST/ONLY, AETH syndrome 0x1F with the MSN that counts the READ. A duplicate READ is executed again with the current MSN and leaves the expected PSN unchanged.",
       "PG332 describes an outgoing read-response path but gives no latency, buffering or MSN rule for re-executed READs."},
      {"A-ERNIC-12", "Requester: a READ response behind the next expected PSN is dropped as a duplicate; one ahead of it, or an ACK whose PSN reaches an unanswered READ (IBTA implied NAK), is reported as an event and the READ stays outstanding (re-issuing is not modelled). A bad response makes the QP fatal: wrong position 0x1B (0x1C for LAST where ONLY was due), AETH missing or not an ACK 0x19, wrong length 0x1A (ONLY), 0x1E (MIDDLE), 0x1F (LAST), 0x1B (FIRST); no NAK is sent.",
       "PG332 lists the fatal codes without saying which check raises which."},
      {"A-ERNIC-13", "PG332's restrictions on incoming READs (64-byte aligned VA, length a multiple of 64 bytes, more than 4 bytes, at most 8 MB) are not enforced: READs of any length follow IBTA.",
       "The simulator models IBTA semantics; a compliance checker is to report such requests."},
      {"A-CMAC-1", "The line costs preamble+SFD (8 B) + frame + FCS (4 B) + IFG (12 B) at the link rate; frames are carried without FCS.",
       "IEEE 802.3 framing; the CMAC generates and strips the FCS."},
      {"A-CMAC-2", "The CMAC RX hands a frame on 8 CMAC cycles after its last byte; the async FIFOs take 4 cycles of the destination clock.",
       "No published figure; a two-flop synchroniser plus pointer compare."},
      {"A-ERNIC-9", "In the 3.x layout XRNICCONF[15:8] counts enabled QPs and cannot hold 256: the driver writes 255, so with C_NUM_QP = 256 the QP numbered 256 stays unusable.",
       "PG332 3.1 allows C_NUM_QP = 256 but gives the count field 8 bits."},
      {"A-ERNIC-10", "Incoming frames with a bad IPv4 header checksum are dropped and counted (INALLDRPPKTCNT[31:16]).",
       "PG332 Table 2-3 lists a bad IPv4 checksum among the drop outcomes."},
      {"A-PCIE-1", "DMA throughput is capped by the PCIe link: lanes x rate x 128/130 x MPS/(MPS+24) bytes per ns (24 bytes of TLP overhead); read latency is pcie.read_latency_ns. MRRS splitting and completion boundaries are not modelled yet.",
       "A first-order model until a PCIe link model exists."},
      {"A-HOST-1", "Host CPU stores (WQEs, fills) reach memory instantly; the driver's only timed accesses are AXI4-Lite transactions.",
       "The host side is not the device under test."},
  };
  return v;
}

}  // namespace ernic
