// Storage of the AXI DRAM model (tb/core/axi_dram.sv): a file mapped with mmap(MAP_SHARED).
//
// The simulator's Python side (cocotb, same process) maps the SAME file with numpy.memmap, so the
// whole device image is written before a run and read back after it in bulk, with no per-beat
// Python. The SV model moves whole bus beats through the DPI-C functions below (one call per beat,
// never per byte). The file is named by the plusarg +dram_file=PATH or the environment variable
// VTA_DRAM_FILE; dram_map() (called by the SV model whenever its reset is asserted) re-stats the
// file and maps it again if its size changed, so one simulator process can run many programs with
// images of different sizes.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "svdpi.h"
#include "Vtop__Dpi.h"  // prototypes Verilator generates from the imports: checks the signatures

namespace {

uint8_t* g_mem = nullptr;
uint64_t g_size = 0;
std::string g_path;

void unmap() {
    if (g_mem) munmap(g_mem, g_size);
    g_mem = nullptr;
    g_size = 0;
}

}  // namespace

extern "C" {

// (Re)map the DRAM file. path: from the SV side's plusarg ("" when none); falls back to the
// environment variable VTA_DRAM_FILE. Returns the mapped size in bytes, or -1 on error.
long long dram_map(const char* path) {
    std::string p = (path && *path) ? path : "";
    if (p.empty()) {
        const char* env = getenv("VTA_DRAM_FILE");
        if (env) p = env;
    }
    if (p.empty()) {
        if (!g_mem) fprintf(stderr, "axi_dram: no DRAM file (+dram_file= or VTA_DRAM_FILE)\n");
        return g_mem ? (long long)g_size : -1;
    }
    int fd = open(p.c_str(), O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "axi_dram: cannot open DRAM file %s\n", p.c_str());
        unmap();
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (g_mem && p == g_path && size == g_size) {
        close(fd);
        return (long long)g_size;
    }
    unmap();
    if (size > 0) {
        void* m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "axi_dram: mmap of %s (%llu bytes) failed\n", p.c_str(),
                    (unsigned long long)size);
            close(fd);
            return -1;
        }
        g_mem = static_cast<uint8_t*>(m);
        g_size = size;
    }
    g_path = p;
    close(fd);  // the mapping stays valid
    return (long long)g_size;
}

// Read one bus beat: the nbytes-aligned line holding addr (nbytes <= 64), little-endian into
// data (16 x 32-bit words = 512 bits). addr is a byte offset in the file: the SV model passes the
// bus address less its window base (cfg_win_base_i), so an address below the window arrives
// as a huge offset. Returns 1, or 0 (data zero) when outside the file.
int dram_read(long long addr, int nbytes, svBitVecVal* data) {
    uint64_t a = (uint64_t)addr & ~(uint64_t)(nbytes - 1);
    memset(data, 0, 64);
    if (!g_mem || a + (uint64_t)nbytes > g_size || a + (uint64_t)nbytes < a) return 0;
    memcpy(data, g_mem + a, nbytes);  // svBitVecVal words are little-endian uint32 on x86
    return 1;
}

// Write one bus beat with byte strobes (bit i of strb enables byte i of the line); addr as for
// dram_read. Returns 1, or 0 (nothing written) when outside the file.
int dram_write(long long addr, int nbytes, const svBitVecVal* data, long long strb) {
    uint64_t a = (uint64_t)addr & ~(uint64_t)(nbytes - 1);
    if (!g_mem || a + (uint64_t)nbytes > g_size || a + (uint64_t)nbytes < a) return 0;
    const uint8_t* src = reinterpret_cast<const uint8_t*>(data);
    uint64_t s = (uint64_t)strb;
    if (nbytes == 64 && s == ~0ull) {
        memcpy(g_mem + a, src, 64);
        return 1;
    }
    for (int i = 0; i < nbytes; ++i)
        if ((s >> i) & 1) g_mem[a + i] = src[i];
    return 1;
}

}  // extern "C"
