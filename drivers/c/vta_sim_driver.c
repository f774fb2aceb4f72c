/*
 * Upstream VTA's driver ABI (vta/driver.h) on the vtabench simulated card (docs/platform.md).
 *
 * The card is a simulator process listening on a Unix socket (vtabench serve; the path is in
 * VTA_SIM_SOCKET). Every request is a 32-byte header and a payload, answered by a 32-byte header
 * and a payload (vta_sim_protocol.h, generated from vtabench.tb.platform.protocol). The card's
 * DRAM is a file this process maps too: a DMA is a request (the simulator advances its clock by
 * the PCIe model and says how many bytes land) followed by a memcpy into or out of the mapping.
 *
 * Buffers: VTAMemAlloc takes device memory (first fit, page aligned, from address 0) and a host
 * copy, which it returns. VTA_CACHED buffers move only on VTAFlushCache (host to device) and
 * VTAInvalidateCache (device to host), as on a board whose CPU caches them; VTA_NOT_CACHED
 * buffers move on every VTAMemCopyFromHost / VTAMemCopyToHost.
 *
 * The connection opens on the first call of any entry point: the card is reset with
 * VTA_SIM_MEM_BYTES of DRAM (default 64 MiB), its register map revision checked, DRAM_BASE,
 * DRAM_SIZE and the upstream pointers written, the finish and error interrupts enabled. It
 * closes when the process exits. Errors the ABI cannot return (a lost connection, a failed DMA)
 * print one line and exit the process with status 1.
 *
 * The card as a sanitizer (include/vta/driver.h, "Errors"): every copy, flush and invalidate is
 * checked against the buffer it starts in (the size asked of VTAMemAlloc, not the pages taken),
 * freed buffers stay in a quarantine (their host copies kept, QUARANTINE_BYTES at most) so a use
 * after free or a double free is named as such. A misuse prints one line naming the buffer (host
 * pointer, device address, size) and the offending offset and size, then abort()s.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vta/bar0.h"
#include "vta/driver.h"
#include "vta_sim_protocol.h"

/* Simulated ns the run waits for an interrupt before it polls STATUS. */
#define POLL_INTERVAL_NS 50000.0
/* Simulated ns a DMA may take. */
#define DMA_TIMEOUT_NS 1000000.0
#define DEFAULT_MEM_BYTES (64ull << 20)
#define ALL_ONES 0xFFFFFFFFu
#define MMIO_RETRIES 3
/* Host bytes of freed buffers kept so that a later use or free of one is recognised. */
#define QUARANTINE_BYTES (64ull << 20)

typedef struct {
  uint8_t* host;
  vta_phy_addr_t phy;
  size_t size; /* bytes asked for: where a copy must end */
  size_t span; /* bytes of device memory taken (whole pages) */
  int cached;
} buffer_t;

typedef struct {
  uint32_t base;
} reg_handle_t;

typedef struct {
  uint32_t runs;
} device_t;

static struct {
  int fd;
  int broken;
  uint8_t* dram;
  uint64_t mem_bytes;
  double clock_ns;
  double now_ns;
  buffer_t* bufs; /* sorted by phy */
  size_t nbufs;
  size_t cap;
  buffer_t* freed; /* the quarantine, oldest first: host copies kept, device pages given back */
  size_t nfreed;
  size_t freed_cap;
  size_t freed_bytes;
} g = {.fd = -1};

/* One line on stderr, and the driver is unusable from here on. */
static void report(const char* fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void report(const char* fmt, va_list ap) {
  fputs("vta sim driver: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fflush(stderr);
  g.broken = 1;
}

static void die(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(fmt, ap);
  va_end(ap);
  exit(EXIT_FAILURE);
}

/* A misuse of the ABI by the calling program (include/vta/driver.h, "Errors"): one line, then
 * abort() at the offending call, as the C library does on a double free. */
static void misuse(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void misuse(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(fmt, ap);
  va_end(ap);
  abort();
}

static const char* op_name(uint32_t op) {
  switch (op) {
    case VTA_SIM_OP_HELLO: return "HELLO";
    case VTA_SIM_OP_ATTACH: return "ATTACH";
    case VTA_SIM_OP_MMIO: return "MMIO";
    case VTA_SIM_OP_DMA_H2D: return "DMA_H2D";
    case VTA_SIM_OP_DMA_D2H: return "DMA_D2H";
    case VTA_SIM_OP_WAIT_IRQ: return "WAIT_IRQ";
    case VTA_SIM_OP_TAKE_IRQ: return "TAKE_IRQ";
    case VTA_SIM_OP_IDLE: return "IDLE";
    default: return "request";
  }
}

/* 0, or -1 with errno (0 for end of stream). */
static int send_all(const void* buf, size_t n) {
  const uint8_t* p = buf;
  while (n) {
    ssize_t k = send(g.fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int recv_all(void* buf, size_t n) {
  uint8_t* p = buf;
  while (n) {
    ssize_t k = recv(g.fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) errno = 0;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* One request; the reply's payload goes to out (at most out_cap bytes, the rest is an error).
 * Returns the reply header; a FAILED status is fatal. */
static vta_sim_reply_t request(uint32_t op, uint64_t addr, uint64_t nbytes, double ns,
                               const void* payload, uint32_t len, void* out, size_t out_cap) {
  vta_sim_request_t req = {op, len, addr, nbytes, ns};
  vta_sim_reply_t rep;
  if (send_all(&req, sizeof req) || (len && send_all(payload, len)) ||
      recv_all(&rep, sizeof rep)) {
    die("the simulator is gone: connection lost during %s (%s)", op_name(op),
        errno ? strerror(errno) : "end of stream");
  }
  char* data = NULL;
  if (rep.count) {
    data = malloc(rep.count + 1);
    if (!data || recv_all(data, rep.count)) die("the simulator is gone during %s", op_name(op));
    data[rep.count] = 0;
  }
  if (rep.status == VTA_SIM_STATUS_FAILED) die("the simulator refused %s: %s", op_name(op), data);
  if (rep.count > out_cap) die("%s: %u reply bytes, expected at most %zu", op_name(op),
                               rep.count, out_cap);
  if (rep.count) memcpy(out, data, rep.count);
  free(data);
  g.now_ns = rep.now_ns;
  return rep;
}

static void mmio(const vta_sim_mmio_op_t* ops, uint32_t n, uint32_t* values) {
  uint32_t scratch[64];
  uint32_t* out = values ? values : scratch;
  if (!values && n > 64) die("MMIO batch of %u writes is too long", n);
  request(VTA_SIM_OP_MMIO, 0, 0, VTA_SIM_NO_LIMIT, ops, n * (uint32_t)sizeof *ops, out,
          n * sizeof *out);
}

static uint32_t reg_read(uint32_t off) {
  vta_sim_mmio_op_t op = {VTA_SIM_MMIO_READ, off, 0, 0};
  uint32_t v = ALL_ONES;
  for (int tries = 0; tries <= MMIO_RETRIES && v == ALL_ONES; tries++) mmio(&op, 1, &v);
  return v;
}

static void reg_write(uint32_t off, uint32_t value) {
  vta_sim_mmio_op_t op = {VTA_SIM_MMIO_WRITE, off, value, 0xF};
  mmio(&op, 1, NULL);
}

static void connect_card(void) {
  if (g.fd >= 0) return;
  const char* path = getenv("VTA_SIM_SOCKET");
  if (!path || !*path) {
    die("VTA_SIM_SOCKET is not set: start a simulator with `vtabench serve --target rtl "
        "--config NAME --socket PATH` and set VTA_SIM_SOCKET=PATH");
  }
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path) die("socket path %s is too long", path);
  strcpy(sa.sun_path, path);
  g.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (g.fd < 0 || connect(g.fd, (struct sockaddr*)&sa, sizeof sa)) {
    die("no simulator serves on %s (%s)", path, strerror(errno));
  }
  char dram_path[4096];
  vta_sim_reply_t hello = request(VTA_SIM_OP_HELLO, 0, 0, VTA_SIM_NO_LIMIT, NULL, 0, dram_path,
                                  sizeof dram_path - 1);
  if (hello.value != VTA_SIM_PROTOCOL_VERSION) {
    die("the simulator speaks protocol %llu, this driver %u", (unsigned long long)hello.value,
        VTA_SIM_PROTOCOL_VERSION);
  }
  dram_path[hello.count] = 0;
  g.clock_ns = hello.ns;
  const char* mem = getenv("VTA_SIM_MEM_BYTES");
  g.mem_bytes = mem && *mem ? strtoull(mem, NULL, 0) : DEFAULT_MEM_BYTES;
  if (!g.mem_bytes || g.mem_bytes % 16) die("VTA_SIM_MEM_BYTES=%s is not a multiple of 16", mem);
  request(VTA_SIM_OP_ATTACH, g.mem_bytes, 0, VTA_SIM_NO_LIMIT, NULL, 0, NULL, 0);
  int dram_fd = open(dram_path, O_RDWR | O_CLOEXEC);
  if (dram_fd < 0) die("cannot open the card's DRAM %s (%s)", dram_path, strerror(errno));
  g.dram = mmap(NULL, g.mem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, dram_fd, 0);
  close(dram_fd);
  if (g.dram == MAP_FAILED) die("cannot map the card's DRAM (%s)", strerror(errno));
  uint32_t version = reg_read(VTA_REG(VERSION));
  if (version == ALL_ONES) die("VERSION reads 0xFFFFFFFF: no device answers on BAR0");
  if (version != VTA_REG_VERSION_EXPECTED) {
    die("device VERSION 0x%08x, this driver expects 0x%08x (register map revision %u vs %u)",
        version, VTA_REG_VERSION_EXPECTED, version >> 24, VTA_REG_REGMAP_REVISION);
  }
  vta_sim_mmio_op_t init[] = {
      {VTA_SIM_MMIO_WRITE, VTA_REG(DRAM_BASE_LO), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(DRAM_BASE_HI), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(DRAM_SIZE_LO), (uint32_t)g.mem_bytes, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(DRAM_SIZE_HI), (uint32_t)(g.mem_bytes >> 32), 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(UOP_BASE_LO), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(UOP_BASE_HI), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(INP_BASE_LO), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(INP_BASE_HI), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(WGT_BASE_LO), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(WGT_BASE_HI), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(ACC_BASE_LO), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(ACC_BASE_HI), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(OUT_BASE_LO), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(OUT_BASE_HI), 0, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(IRQ_STATUS),
       VTA_REGS__IRQ_STATUS__FINISH_bm | VTA_REGS__IRQ_STATUS__ERROR_bm, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(IRQ_ENABLE),
       VTA_REGS__IRQ_ENABLE__FINISH_bm | VTA_REGS__IRQ_ENABLE__ERROR_bm, 0xF},
  };
  mmio(init, sizeof init / sizeof init[0], NULL);
}

/* Leave the card when the process exits (the simulator then ends, or serves the next driver). */
__attribute__((destructor)) static void disconnect_card(void) {
  if (g.fd < 0) return;
  if (!g.broken) {
    vta_sim_request_t bye = {VTA_SIM_OP_BYE, 0, 0, 0, VTA_SIM_NO_LIMIT};
    vta_sim_reply_t rep;
    if (send_all(&bye, sizeof bye) == 0) (void)recv_all(&rep, sizeof rep);
  }
  if (g.dram && g.dram != MAP_FAILED) munmap(g.dram, g.mem_bytes);
  close(g.fd);
  g.fd = -1;
}

/* ---- DMA ---------------------------------------------------------------------------------- */
static void dma(uint32_t op, vta_phy_addr_t phy, uint8_t* host, size_t n) {
  if ((uint64_t)phy + n > g.mem_bytes) {
    die("DMA of %zu bytes at device address 0x%llx lies outside the card's %llu bytes", n,
        (unsigned long long)phy, (unsigned long long)g.mem_bytes);
  }
  vta_sim_reply_t r = request(op, phy, n, DMA_TIMEOUT_NS, NULL, 0, NULL, 0);
  size_t landed = r.status == VTA_SIM_STATUS_DMA_TIMEOUT ? 0 : (size_t)r.value;
  if (op == VTA_SIM_OP_DMA_H2D) memcpy(g.dram + phy, host, landed);
  else memcpy(host, g.dram + phy, landed);
  if (r.status != VTA_SIM_STATUS_OK) {
    die("%s of %zu bytes at device address 0x%llx failed (%s after %zu bytes)", op_name(op), n,
        (unsigned long long)phy,
        r.status == VTA_SIM_STATUS_DMA_TIMEOUT ? "timeout" : "error", landed);
  }
}

/* ---- memory ------------------------------------------------------------------------------- */
/* The buffer of list whose pages hold p, or NULL. */
static buffer_t* buffer_at(buffer_t* list, size_t n, const void* p) {
  const uint8_t* q = p;
  for (size_t i = 0; i < n; i++) {
    if (q >= list[i].host && q < list[i].host + list[i].span) return &list[i];
  }
  return NULL;
}

#define BUF_FMT "buffer %p (device address 0x%llx, %zu bytes)"
#define BUF_ARGS(b) (void*)(b)->host, (unsigned long long)(b)->phy, (b)->size

/* The live buffer that p, the start of an access of n bytes by fn (what: "writing", "reading",
 * "flushing", "invalidating"; NULL for an address alone), lies in. An access past the buffer's
 * end or into a freed buffer is a misuse, and so is a p in no buffer when required (NULL is
 * returned for the host side of a copy, which may be any memory). */
static buffer_t* checked_access(const char* fn, const char* what, const void* p, size_t n,
                                int required) {
  int freed = 0;
  buffer_t* b = buffer_at(g.bufs, g.nbufs, p);
  if (!b) {
    b = buffer_at(g.freed, g.nfreed, p);
    freed = b != NULL;
  }
  if (!b) {
    if (required) misuse("%s: %p is not inside a VTAMemAlloc buffer", fn, p);
    return NULL;
  }
  size_t off = (size_t)((const uint8_t*)p - b->host);
  char act[96];
  if (what) snprintf(act, sizeof act, "%s %zu bytes at offset %zu", what, n, off);
  else snprintf(act, sizeof act, "offset %zu", off);
  if (freed) misuse("%s: use after free: %s of " BUF_FMT ", which VTAMemFree gave back", fn, act,
                    BUF_ARGS(b));
  if (off > b->size || n > b->size - off) {
    misuse("%s: %s of " BUF_FMT " runs past its end", fn, act, BUF_ARGS(b));
  }
  return b;
}

/* Keep a freed buffer's host copy (its device pages are free already); the oldest ones beyond
 * QUARANTINE_BYTES are given back to the C library. */
static void quarantine(buffer_t b) {
  if (g.nfreed == g.freed_cap) {
    g.freed_cap = g.freed_cap ? 2 * g.freed_cap : 16;
    g.freed = realloc(g.freed, g.freed_cap * sizeof *g.freed);
    if (!g.freed) die("out of host memory");
  }
  g.freed[g.nfreed++] = b;
  g.freed_bytes += b.span;
  size_t drop = 0;
  while (g.freed_bytes > QUARANTINE_BYTES && g.nfreed - drop > 1) {
    g.freed_bytes -= g.freed[drop].span;
    free(g.freed[drop++].host);
  }
  memmove(g.freed, g.freed + drop, (g.nfreed - drop) * sizeof *g.freed);
  g.nfreed -= drop;
}

void* VTAMemAlloc(size_t size, int cached) {
  connect_card();
  size_t need = (size + VTA_PAGE_BYTES - 1) / VTA_PAGE_BYTES * VTA_PAGE_BYTES;
  if (!need) need = VTA_PAGE_BYTES;
  uint64_t at = 0;
  size_t slot = 0;
  for (; slot < g.nbufs; slot++) { /* first gap that fits */
    if (g.bufs[slot].phy - at >= need) break;
    at = g.bufs[slot].phy + g.bufs[slot].span;
  }
  if (at + need > g.mem_bytes) return NULL;
  if (g.nbufs == g.cap) {
    g.cap = g.cap ? 2 * g.cap : 16;
    g.bufs = realloc(g.bufs, g.cap * sizeof *g.bufs);
    if (!g.bufs) die("out of host memory");
  }
  uint8_t* host = aligned_alloc(64, need);
  if (!host) return NULL;
  memset(host, 0, need);
  memmove(&g.bufs[slot + 1], &g.bufs[slot], (g.nbufs - slot) * sizeof *g.bufs);
  g.bufs[slot] = (buffer_t){host, (vta_phy_addr_t)at, size, need, cached};
  g.nbufs++;
  return host;
}

void VTAMemFree(void* buf) {
  buffer_t* b = buffer_at(g.bufs, g.nbufs, buf);
  if (!b) {
    b = buffer_at(g.freed, g.nfreed, buf);
    if (b && (uint8_t*)buf == b->host) misuse("VTAMemFree: double free of " BUF_FMT, BUF_ARGS(b));
    if (b) {
      misuse("VTAMemFree: use after free: %p is at offset %zu of " BUF_FMT ", which VTAMemFree "
             "gave back", buf, (size_t)((uint8_t*)buf - b->host), BUF_ARGS(b));
    }
    misuse("VTAMemFree: %p is not a VTAMemAlloc buffer", buf);
  }
  if ((uint8_t*)buf != b->host) {
    misuse("VTAMemFree: %p is at offset %zu of " BUF_FMT ", not its start", buf,
           (size_t)((uint8_t*)buf - b->host), BUF_ARGS(b));
  }
  buffer_t gone = *b;
  size_t slot = (size_t)(b - g.bufs);
  memmove(&g.bufs[slot], &g.bufs[slot + 1], (g.nbufs - slot - 1) * sizeof *g.bufs);
  g.nbufs--;
  quarantine(gone);
}

vta_phy_addr_t VTAMemGetPhyAddr(void* buf) {
  buffer_t* b = checked_access("VTAMemGetPhyAddr", NULL, buf, 0, 1);
  return b->phy + (vta_phy_addr_t)((uint8_t*)buf - b->host);
}

/* A copy between a buffer and host memory, or between two buffers (a device-to-device copy is
 * a copy whose host side is another buffer): both sides are checked. */
void VTAMemCopyFromHost(void* dst, const void* src, size_t size) {
  buffer_t* b = checked_access("VTAMemCopyFromHost", "writing", dst, size, 1);
  checked_access("VTAMemCopyFromHost", "reading", src, size, 0);
  memcpy(dst, src, size);
  if (!b->cached) dma(VTA_SIM_OP_DMA_H2D, VTAMemGetPhyAddr(dst), dst, size);
}

void VTAMemCopyToHost(void* dst, const void* src, size_t size) {
  buffer_t* b = checked_access("VTAMemCopyToHost", "reading", src, size, 1);
  checked_access("VTAMemCopyToHost", "writing", dst, size, 0);
  if (!b->cached) dma(VTA_SIM_OP_DMA_D2H, VTAMemGetPhyAddr((void*)src), (uint8_t*)src, size);
  memcpy(dst, src, size);
}

/* A flush or invalidate (what) of size bytes of the buffer at vir, whose device address is phy. */
static void check_cache_op(const char* fn, const char* what, void* vir, vta_phy_addr_t phy,
                           int size) {
  if (size < 0) misuse("%s: %s %d bytes at %p: a negative size", fn, what, size, vir);
  buffer_t* b = checked_access(fn, what, vir, (size_t)size, 1);
  size_t off = (size_t)((uint8_t*)vir - b->host);
  if (phy != b->phy + off) {
    misuse("%s: %s %d bytes at offset %zu of " BUF_FMT ": device address 0x%llx given, the "
           "buffer's is 0x%llx", fn, what, size, off, BUF_ARGS(b), (unsigned long long)phy,
           (unsigned long long)(b->phy + off));
  }
}

void VTAFlushCache(void* vir_addr, vta_phy_addr_t phy_addr, int size) {
  connect_card();
  check_cache_op("VTAFlushCache", "flushing", vir_addr, phy_addr, size);
  if (size > 0) dma(VTA_SIM_OP_DMA_H2D, phy_addr, vir_addr, (size_t)size);
}

void VTAInvalidateCache(void* vir_addr, vta_phy_addr_t phy_addr, int size) {
  connect_card();
  check_cache_op("VTAInvalidateCache", "invalidating", vir_addr, phy_addr, size);
  if (size > 0) dma(VTA_SIM_OP_DMA_D2H, phy_addr, vir_addr, (size_t)size);
}

/* ---- registers ---------------------------------------------------------------------------- */
void* VTAMapRegister(uint32_t addr) {
  connect_card();
  reg_handle_t* h = malloc(sizeof *h);
  if (!h) die("out of host memory");
  h->base = addr;
  return h;
}

void VTAUnmapRegister(void* vta) { free(vta); }

void VTAWriteMappedReg(void* base_addr, uint32_t offset, uint32_t val) {
  reg_write(((reg_handle_t*)base_addr)->base + offset, val);
}

uint32_t VTAReadMappedReg(void* base_addr, uint32_t offset) {
  return reg_read(((reg_handle_t*)base_addr)->base + offset);
}

/* ---- the device --------------------------------------------------------------------------- */
VTADeviceHandle VTADeviceAlloc(void) {
  connect_card();
  device_t* d = calloc(1, sizeof *d);
  if (!d) die("out of host memory");
  return d;
}

void VTADeviceFree(VTADeviceHandle handle) { free(handle); }

int VTADeviceRun(VTADeviceHandle device, vta_phy_addr_t insn_phy_addr, uint32_t insn_count,
                 uint32_t wait_cycles) {
  if (reg_read(VTA_REG(STATUS)) & VTA_REGS__STATUS__BUSY_bm) return 3;
  request(VTA_SIM_OP_TAKE_IRQ, 0, 0, VTA_SIM_NO_LIMIT, NULL, 0, NULL, 0); /* stale MSIs */
  vta_sim_mmio_op_t launch[] = {
      {VTA_SIM_MMIO_WRITE, VTA_REG(IRQ_STATUS),
       VTA_REGS__IRQ_STATUS__FINISH_bm | VTA_REGS__IRQ_STATUS__ERROR_bm, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(INSN_COUNT), insn_count, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(INSN_BASE_LO), (uint32_t)insn_phy_addr, 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(INSN_BASE_HI), (uint32_t)((uint64_t)insn_phy_addr >> 32), 0xF},
      {VTA_SIM_MMIO_WRITE, VTA_REG(CTRL), VTA_REGS__CTRL__LAUNCH_bm, 0xF},
  };
  double t0 = g.now_ns;
  double limit_ns = wait_cycles ? wait_cycles * g.clock_ns : -1.0;
  mmio(launch, sizeof launch / sizeof launch[0], NULL);
  for (;;) { /* the MSI, or a STATUS poll after each slice without one (a lost MSI) */
    double slice = POLL_INTERVAL_NS;
    if (limit_ns >= 0 && limit_ns - (g.now_ns - t0) < slice) slice = limit_ns - (g.now_ns - t0);
    if (slice < 1.0) slice = 1.0;
    request(VTA_SIM_OP_WAIT_IRQ, 0, 0, slice, NULL, 0, NULL, 0);
    uint32_t status = reg_read(VTA_REG(STATUS));
    if ((status & VTA_REGS__STATUS__DONE_bm) && !(status & VTA_REGS__STATUS__BUSY_bm)) break;
    if (limit_ns >= 0 && g.now_ns - t0 >= limit_ns) return 1;
  }
  uint32_t error = reg_read(VTA_REG(ERROR_CODE));
  reg_write(VTA_REG(IRQ_STATUS),
            VTA_REGS__IRQ_STATUS__FINISH_bm | VTA_REGS__IRQ_STATUS__ERROR_bm);
  ((device_t*)device)->runs++;
  return error ? 2 : 0;
}
