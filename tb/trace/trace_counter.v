// A tiny counter whose Verilator-written VCD is the RTL half of the
// waveform merge tests (tb/trace/test_vcd.cpp).
module trace_counter (
    input  wire        clk,
    input  wire        rst,
    output reg  [7:0]  count,
    output wire        crc_valid,
    output reg  [71:0] wide
);
  real level;
  assign crc_valid = (count[1:0] == 2'b11);
  always @(posedge clk) begin
    if (rst) begin
      count <= 8'd0;
      wide  <= 72'd0;
      level <= 0.0;
    end else begin
      count <= count + 8'd1;
      wide  <= {count + 8'd1, 64'hF0F0_0000_0000_0000};
      level <= level + 0.5;
    end
  end
endmodule
