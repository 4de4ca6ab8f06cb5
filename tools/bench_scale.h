// tools: `ernic-sim bench --scale` (issue 17): what the number of QPs costs.
//
// Wall seconds per simulated millisecond of line-rate RDMA WRITE traffic
// (64 KiB messages, A -> B, the bench's named configuration, register layout
// 4.x so that 255 QPs fit: num_qp 256) with 1, 8, 64 and 255 connected QPs
// all active (each posts its share of `scale_bytes`; ERNIC's QP manager
// serves them round robin), and with 255 connected but one active (the goal:
// an idle QP costs nothing, so that row equals the 1/1 row); max RSS of each
// run. Each datapath of opt.datapaths runs every case. A case's traffic
// figure is its run minus the same run without the posts (CM setup of 255
// connections is not traffic): wall time and simulated time from the two
// runs' JSON reports (`wall.seconds`, `sim_time_ps`: the kernel's run, not
// process start-up). Also as simulated core cycles per wall second and its
// ratio to the SystemC floor (measured in the same bench run, as the speed
// table does). Prints the table; writes <out>/scale.csv:
//   active_qps,connected_qps,datapath,traffic_sim_us,traffic_wall_s,wall_s_per_sim_ms,
//   sim_core_cycles_per_wall_second,floor_cycles_per_wall_second,ratio_to_floor,max_rss_kib
#pragma once
#include <string>

#include "tools/bench.h"

namespace ernic {

// 0, 1 when a run failed, 2 when the output directory or CSV cannot be written.
int bench_scale_main(const BenchOptions& opt, const std::string& self);

}  // namespace ernic
