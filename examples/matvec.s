# Two int8 vectors times a 16x16 int8 matrix on VTA (configuration "default": BATCH 1, BLOCK 16),
# then y = max(acc >> 2, 0), stored as int8. make_dram.py writes the DRAM image this program
# reads (and checks the result); README.md, "The command line", shows the commands.
#
# DRAM layout (dram_base counts elements of the instruction's memory type):
#   byte 0     UOP  element 0        one micro-op, all indices 0
#   byte 256   INP  elements 16, 17  x[0], x[1]: 16 int8 each
#   byte 512   WGT  element 2        W: 16x16 int8 (row o holds the weights of output o)
#   byte 1024  OUT  elements 64, 65  y[0], y[1]: written by the STORE
#
# Stages: LOAD of INP/WGT runs on the load stage; LOAD of UOP/ACC, GEMM, ALU and FINISH on
# the compute stage; STORE on the store stage. Tokens order them (docs/isa.md): *_next_dep
# talks to the next stage, *_prev_dep to the previous one.

LOAD memory_type=UOP y_size=1 x_size=1 x_stride=1                 # compute: micro-op -> uop[0]
LOAD memory_type=INP dram_base=16 y_size=1 x_size=2 x_stride=2    # load: x[0..1] -> inp[0..1]
LOAD memory_type=WGT dram_base=2 y_size=1 x_size=1 x_stride=1 push_next_dep=1  # W -> wgt[0]; tell compute

# acc[i] = 0, then acc[i] += inp[i] . wgt[0] for i in 0..1 (iter_out=2, dst and src step 1)
GEMM reset_reg=1 pop_prev_dep=1 uop_end=1 iter_out=2 iter_in=1 dst_factor_out=1
GEMM uop_end=1 iter_out=2 iter_in=1 dst_factor_out=1 src_factor_out=1

# acc[i] = max(acc[i] >> 2, 0); the ALU also leaves the low 8 bits in out[i]
ALU alu_opcode=SHR use_imm=1 imm=2 uop_end=1 iter_out=2 iter_in=1 dst_factor_out=1 src_factor_out=1
ALU alu_opcode=MAX use_imm=1 imm=0 uop_end=1 iter_out=2 iter_in=1 dst_factor_out=1 src_factor_out=1 push_next_dep=1

# store: out[0..1] -> y; then hand the token back so compute sees the store done before FINISH
STORE pop_prev_dep=1 push_prev_dep=1 memory_type=OUT dram_base=64 y_size=1 x_size=2 x_stride=2
LOAD pop_next_dep=1 memory_type=ACC                                # compute: wait for the store
FINISH
