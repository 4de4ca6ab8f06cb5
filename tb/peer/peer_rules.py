"""tb/peer: the rules peer_family.py converts a protocol scenario by: one of
its two ERNIC nodes becomes `kind: peer`, the ideal IBTA peer (model/peer,
scenarios/README.md "kind: peer"). Every rule carries its reason, printed in
the family's table and written into each variant's header.
"""

# The folders whose scenarios are protocol scenarios (perf/: long
# measurements; topology/: more than two nodes and a switch; peer/: a peer
# already).
FOLDERS = ("handshake", "traffic", "errors", "examples")

# Steps naming the candidate node that the peer cannot take: a role the peer
# has not, so that node stays an ERNIC (the other one is tried).
REFUSED_STEPS = {
    "recv": "recv: the node's software reading its RQ (the peer's application reposts every element itself)",
    "deregister_mr": "deregister_mr: the driver's MR table",
    "connect_reject": "connect_reject: CM (the peer connects out of band only)",
    "disconnect": "disconnect: CM (the peer connects out of band only)",
    "hw_handshake": "hw_handshake: ERNIC's HW-handshake doorbells",
    "qp_setup": "qp_setup: the QP-setup offload in front of ERNIC",
    "qp_release": "qp_release: the QP-setup offload in front of ERNIC",
    "qp_adopt": "qp_adopt: the QP-setup offload in front of ERNIC",
    "program": "program: a host program on the bridge",
    "expect_bypass": "expect_bypass: ERNIC's bypass (non-RoCE) RX path",
}

# Steps on the candidate node after which the variant ends (at the top
# level; inside repeat or parallel they refuse the node): what comes before
# is kept.
TRUNCATING_STEPS = {
    "recover": "recover: the drivers of both ends re-create the QP (the peer's QPs are out of band); the variant "
               "ends before it",
}

# Node keys that make the candidate an ERNIC in its purpose.
REFUSED_NODE_KEYS = {
    "host": "host: program (a program drives the node's ERNIC)",
    "qp_setup_fsm": "qp_setup_fsm: the QP-setup offload in front of ERNIC",
}

# Node keys of an ERNIC the peer has no use for: removed (the parser refuses
# them on a peer).
ERNIC_NODE_KEYS = ("ack", "mr_cache", "doorbell_layout", "rx", "test_tx_underflow", "test_datapath_corrupt",
                   "handshake_random", "extensions")

# The peer's parameters in every variant, each with its reason.
PEER_PARAMS = {
    "credits": ("invalid", "the scenarios' ACK patterns carry ERNIC's AETH credit field, 31 (invalid: no end-to-end "
                           "credits, IBTA 9.7.7.2), which the peer then sends too"),
}

# Steps on the replaced node that address ERNIC internals: dropped, each
# kind for its reason.
DROPPED_STEPS = {
    "reg_write": "ERNIC's registers on the replaced node (the peer is configured by its `peer` map)",
    "reg_read": "ERNIC's registers on the replaced node",
    "reg_expect": "ERNIC's registers on the replaced node",
    "reg_poll": "ERNIC's registers on the replaced node",
    "wait_until": "a register of the replaced node's ERNIC",
    "debug_preset": "ERNIC's QP context on the replaced node",
    "expect_qp": "ERNIC's QP state on the replaced node",
    "mem_write": "physical host memory of the replaced node's driver layout (the peer's VAs are not its addresses)",
    "mem_expect": "physical host memory of the replaced node's driver layout (queues, doorbells, MR pages)",
}

# Keys of a step on the peer's end that only ERNIC's driver reads: removed.
DROPPED_KEYS = {
    "wait_completions": {"batch": "ERNIC's CQ batching", "cq_head": "ERNIC's CQ head register"},
    "post": {"doorbell": "ERNIC's SQ doorbell"},
}

# Checks that hold only while the replaced node is an ERNIC, per scenario
# (found by running the variants): (step kind, the keys a step must have,
# the reason). A matching expect_frames is kept (the next window on its
# direction and tap starts where it did) but matches any frames; any other
# matching step is dropped.
ACK_POLICY = _ACKS = ("ERNIC's ACK policy: an ACK per packet or by its coalescing timer and count, a re-ACK per duplicate "
         "packet; the peer ACKs the packets with AckReq (IBTA 9.7.5.1.1: a responder may coalesce)")
_MSN = "B's MSN preset by debug_preset (dropped): the peer's MSN starts at 0"
_B_FRAMES = [("expect_frames", {"dir": "B->A"}, _ACKS)]
TRIMMED = {
    "fault_drop": _B_FRAMES,
    "fault_duplicate": _B_FRAMES,
    "rc_read_duplicate_mid_write": _B_FRAMES,
    "rc_write_ack_coalesced": _B_FRAMES,
    "rc_write_ack_modes": _B_FRAMES,
    "rc_write_drop_ack_recovered": _B_FRAMES,
    "rc_write_drop_data_recovered": _B_FRAMES,
    "rc_write_nak_after_timeout_goback": _B_FRAMES,
    "rc_write_nak_lost_resend": _B_FRAMES,
    "rc_write_psn_wrap": _B_FRAMES,
    "rc_write_stale_nak_after_ack": _B_FRAMES,
    "rc_send_stale_ack_after_newer": _B_FRAMES,
    "rc_read_implied_nak": _B_FRAMES,
    "rc_read_implied_nak_between_writes": _B_FRAMES,
    "rc_read_64k": _B_FRAMES,
    "rc_read_duplicate": _B_FRAMES,
    "rc_read_sizes": _B_FRAMES,
    "rc_ipv6_write_read_send": _B_FRAMES,
    "link_down": _B_FRAMES,
    "msn_preset": [("expect_frames", {"dir": "B->A"}, _MSN)],
    "rc_send_msn_wrap": [("expect_frames", {"dir": "B->A"}, _MSN)],
    "rc_read_reissue_current_msn": [
        ("expect_frames", {"dir": "B->A"}, "ERNIC's order: the re-issued READ's responses before a SEND's ACK; the "
                                           "peer answers each request when it arrives")],
    "frame_expectations": [
        ("expect_frames", {"dir": "A->B", "tap": "rx"}, "repeat: 20 counts the 2 CM messages (out of band: none)"),
        ("expect_frames", {"dir": "B->A"}, _ACKS)],
    "rc_write_resend_cut_by_ack": [
        ("expect_frames", {"dir": "A->B"}, "the resend ERNIC's ACK cuts at its instant; the peer's ACK comes at "
                                           "another")],
    "rx_validation_drops": [
        ("reg_expect", {"node": "A", "reg": "RETRYCNTSTS"},
         "A's resends count B's drops: 11 with B's ERNIC, 9 with the peer, which has no IPv6 switch for an IPv4 QP "
         "(QPCONFi[7], a register write on B: dropped) and does not check the source MAC (RoCEv2 is routed, annex "
         "A17: the MAC is the last hop's; ERNIC checks it)")],
    "bypass": [
        ("reg_expect", {"node": "B", "reg": "INALLDRPPKTCNT"},
         "B's count of dropped frames includes 2 of A's ERNIC's CM exchange (16 out of band)")],
}

_RNR = ("RNR NAKs from B's ERNIC when its RQ is not handed back (no recv); the peer's application reposts every "
        "element at once, its RQ never runs out (IBTA 9.7.5.2.8 leaves RNR to the responder)")
_CNP = "CNPs from B's ERNIC (DCQCN notification point); the peer sends none (not modelled: annex A17.9)"
# Steps on the remaining ERNIC node whose register writes land later than
# the step ends, followed by a wait: (microseconds, reason).
SETTLING_STEPS = {
    "deregister_mr": (1, "the driver's MR-table writes are posted MMIO, in ERNIC about 260 ns after the step ends; "
                         "an ERNIC requester's next post takes longer than that to reach the wire, the peer's does "
                         "not (its WRITE arrived before the deregistration and was rightly ACKed)"),
}

# Scenarios skipped as a whole, with the reason (after a run showed it).
_TIMER = ("with A as the peer: a delayed answer outlasts the peer's ack_timeout_ns (100 us) but not A's ERNIC "
          "ACK timeout, so the peer goes back N (IBTA 9.7.6.1.3) where ERNIC waited")
SKIPPED = {
    "rc_send_resend_withdrawn_by_ack": _TIMER,
    "rc_write_duplicate_reack_after_read": _TIMER,
    "rc_write_sq_full": "A's SQ full at an instant: the peer's ACKs come sooner than ERNIC's and the SQ never fills",
    "rc_ipv6_wrong_da": ("A's go-backs after the frame B drops (RETRYCNTSTS, the resent frames): ERNIC and the peer "
                         "NAK and ACK what follows at other instants"),
    "rc_send_rnr_exhausted": _RNR,
    "rc_send_rnr_nak_repeated": _RNR,
    "rc_send_rnr_recovered": _RNR,
    "rc_send_rnr_timer0": _RNR,
    "rc_send_rnr_wait_outlasts_ack_timeout": _RNR,
    "rc_write_cnp_storm": _CNP,
    "rc_write_ecn_cnp": _CNP,
}
