// DPI-C side of the pipeline event log (tb/core/vta_trace_log.sv; docs/visualize.md).
//
// One text record per event, buffered, flushed at the end of every run (so a reader can take the
// file between runs of a long-lived simulator) and at close:
//   L <insn_count>                                       a run starts (cycle 0)
//   D <cycle> <stage> <index> <instruction, 32 hex digits>  fetch put it into the stage's queue
//   R <stage> <index> <take> <retire> <pop_wait> <mem_wait> <push_wait>
//                                                        the stage retired it: took it in cycle
//                                                        take, busy take+1..retire; wait cycles
//   E <cycles> <error> <load_busy> <compute_busy> <store_busy> <load_insns> <compute_insns>
//     <store_insns>                                      the run ended: the core's counters
// Stages by id (vta_stage_pkg): 0 load, 1 compute, 2 store. Python reads it:
// vtabench.report.timeline.read_trace.

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "svdpi.h"

namespace {

FILE* g_log = nullptr;

}  // namespace

extern "C" {

// Open the trace file: path (the +vta_trace= plusarg, "" when none), else the environment
// variable VTA_TRACE_FILE (how a simulator started by other tools, the device server, gets one).
// Returns 1 when a file is open, 0 when there is none (no tracing).
int vta_trace_open(const char* path) {
    if (!path || !*path) path = std::getenv("VTA_TRACE_FILE");
    if (!path || !*path) return 0;
    g_log = std::fopen(path, "w");
    if (!g_log) {
        std::fprintf(stderr, "vta_trace_log: cannot write the trace file %s\n", path);
        return 0;
    }
    std::setvbuf(g_log, nullptr, _IOFBF, 1 << 20);
    std::fprintf(g_log, "# vtabench pipeline trace, format 1\n");
    return 1;
}

void vta_trace_close() {
    if (g_log) std::fclose(g_log);
    g_log = nullptr;
}

void vta_trace_launch(unsigned int insn_count) {
    if (g_log) std::fprintf(g_log, "L %u\n", insn_count);
}

void vta_trace_dispatch(unsigned int cycle, unsigned int stage, unsigned int idx,
                        const svBitVecVal* insn) {
    if (g_log) {
        std::fprintf(g_log, "D %u %u %u %08x%08x%08x%08x\n", cycle, stage, idx, insn[3], insn[2],
                     insn[1], insn[0]);
    }
}

void vta_trace_retire(unsigned int stage, unsigned int idx, unsigned int take,
                      unsigned int retire, unsigned int pop_wait, unsigned int mem_wait,
                      unsigned int push_wait) {
    if (g_log) {
        std::fprintf(g_log, "R %u %u %u %u %u %u %u\n", stage, idx, take, retire, pop_wait,
                     mem_wait, push_wait);
    }
}

void vta_trace_done(unsigned int cycles, unsigned int error, unsigned int load_busy,
                    unsigned int compute_busy, unsigned int store_busy, unsigned int load_insns,
                    unsigned int compute_insns, unsigned int store_insns) {
    if (g_log) {
        std::fprintf(g_log, "E %u %u %u %u %u %u %u %u\n", cycles, error, load_busy,
                     compute_busy, store_busy, load_insns, compute_insns, store_insns);
        std::fflush(g_log);
    }
}

}  // extern "C"
