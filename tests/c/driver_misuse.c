/*
 * A driver program that misuses the C driver's buffers in one way (tests/test_c_driver.py):
 *
 *   driver_misuse CASE
 *
 * It allocates buffer A (4096 bytes at device address 0) and B (16384 bytes after it), prints
 * "A=<pointer> B=<pointer> H=<pointer>" (H: host memory, no buffer) so the test knows their
 * names, then does CASE. A misuse must not return (the driver aborts); "ok" does everything in
 * bounds and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vta/driver.h"

#define A_BYTES 4096
#define B_BYTES 16384

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CASE\n", argv[0]);
    return 2;
  }
  const char* c = argv[1];
  static unsigned char host[2 * B_BYTES];
  for (size_t i = 0; i < sizeof host; i++) host[i] = (unsigned char)i;
  unsigned char* a = VTAMemAlloc(A_BYTES, VTA_NOT_CACHED);
  unsigned char* b = VTAMemAlloc(B_BYTES, VTA_CACHED);
  printf("A=%p B=%p H=%p\n", (void*)a, (void*)b, (void*)host);
  fflush(stdout);
  vta_phy_addr_t pa = VTAMemGetPhyAddr(a);

  if (!strcmp(c, "ok")) { /* the largest in-bounds use of every entry point */
    VTAMemCopyFromHost(a, host, A_BYTES);
    VTAMemCopyToHost(host + A_BYTES, a, A_BYTES);
    VTAMemCopyFromHost(b + B_BYTES - A_BYTES, a, A_BYTES); /* device to device */
    VTAFlushCache(b, VTAMemGetPhyAddr(b), B_BYTES);
    VTAInvalidateCache(b + 1, VTAMemGetPhyAddr(b) + 1, B_BYTES - 1);
    VTAMemCopyToHost(host, b + B_BYTES - A_BYTES, A_BYTES);
    VTAMemFree(a);
    VTAMemFree(b);
    if (memcmp(host, host + A_BYTES, A_BYTES)) {
      fprintf(stderr, "driver_misuse: the round trip changed the data\n");
      return 1;
    }
    return 0;
  }
  if (!strcmp(c, "h2d")) VTAMemCopyFromHost(a, host, 2 * A_BYTES);
  else if (!strcmp(c, "d2h")) VTAMemCopyToHost(host, a + 1024, A_BYTES);
  else if (!strcmp(c, "d2d")) VTAMemCopyFromHost(b, a, 2 * A_BYTES); /* reads past A */
  else if (!strcmp(c, "flush")) VTAFlushCache(a, pa, 2 * A_BYTES);
  else if (!strcmp(c, "invalidate")) VTAInvalidateCache(a + 100, pa + 100, A_BYTES - 99);
  else if (!strcmp(c, "wrong_address")) VTAFlushCache(a, pa + A_BYTES, 16);
  else if (!strcmp(c, "negative_size")) VTAInvalidateCache(a, pa, -1);
  else if (!strcmp(c, "not_a_buffer")) VTAMemCopyFromHost(host, host + 16, 16);
  else if (!strcmp(c, "free_inside")) VTAMemFree(a + 8);
  else if (!strcmp(c, "use_after_free")) {
    VTAMemFree(a);
    VTAMemCopyFromHost(a, host, 16);
  } else if (!strcmp(c, "double_free")) {
    VTAMemFree(a);
    VTAMemFree(a);
  } else {
    fprintf(stderr, "driver_misuse: unknown case %s\n", c);
    return 2;
  }
  fprintf(stderr, "driver_misuse: the driver let case %s through\n", c);
  return 3;
}
