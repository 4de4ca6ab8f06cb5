// rtl/floor: the SystemC floor (issue 17). A 32-bit counter clocked by
// sc_clock: the least a Verilated block can cost a cycle in this kernel.
// `ernic-sim floor` runs it and `ernic-sim bench` states every speed also
// as a ratio to it, measured in the same run on the same machine.
module floor_counter (
    input  logic        clk,
    input  logic        rst_n,
    output logic [31:0] count
);
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) count <= 32'd0;
    else count <= count + 32'd1;
  end
endmodule
