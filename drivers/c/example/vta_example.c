/*
 * An example driver program for the simulated card, written against upstream VTA's driver ABI:
 * load a program and its DRAM image, run it on the card, check the image it leaves.
 *
 *   vta_example PROG.bin DRAM.bin EXPECTED.bin
 *
 * PROG.bin: the instruction stream (16 bytes each); DRAM.bin: the device memory image from
 * address 0 (instructions address DRAM with absolute element indices, upstream's base-0
 * convention); EXPECTED.bin: the image after the run (fsim's). Exit status 0 when the card's
 * image equals it. The card: VTA_SIM_SOCKET (vtabench serve), docs/platform.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vta/bar0.h"
#include "vta/driver.h"
#include "vta_config.h"

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "vta_example: cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = malloc(n > 0 ? (size_t)n : 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "vta_example: cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PROG.bin DRAM.bin EXPECTED.bin\n", argv[0]);
    return 2;
  }
  size_t code_size, image_size, expected_size;
  unsigned char* code = read_file(argv[1], &code_size);
  unsigned char* image = read_file(argv[2], &image_size);
  unsigned char* expected = read_file(argv[3], &expected_size);
  if (code_size == 0 || code_size % 16 || expected_size != image_size) {
    fprintf(stderr, "vta_example: %s must hold whole 16-byte instructions and %s be as long as "
            "%s\n", argv[1], argv[3], argv[2]);
    return 2;
  }

  VTADeviceHandle dev = VTADeviceAlloc();
  void* regs = VTAMapRegister(0);
  uint32_t config_id = VTAReadMappedReg(regs, VTA_REG(CONFIG_ID));
  if (config_id != VTA_CONFIG_ID) {
    fprintf(stderr, "vta_example: the card is configuration 0x%08x, this program was built for "
            "0x%08x\n", config_id, (unsigned)VTA_CONFIG_ID);
    return 2;
  }

  /* The image at device address 0 (the first allocation), cached: written back by a flush. */
  unsigned char* dram = VTAMemAlloc(image_size, VTA_CACHED);
  vta_phy_addr_t dram_phy = VTAMemGetPhyAddr(dram);
  if (!dram || dram_phy != 0) {
    fprintf(stderr, "vta_example: the image must sit at device address 0\n");
    return 2;
  }
  VTAMemCopyFromHost(dram, image, image_size);
  VTAFlushCache(dram, dram_phy, (int)image_size);
  /* The instructions, not cached: the copy goes straight to the device. */
  void* insns = VTAMemAlloc(code_size, VTA_NOT_CACHED);
  VTAMemCopyFromHost(insns, code, code_size);

  int rc = VTADeviceRun(dev, VTAMemGetPhyAddr(insns), (uint32_t)(code_size / 16), 100000000u);
  if (rc != 0) {
    fprintf(stderr, "vta_example: run failed (%d): ERROR_CODE 0x%02x at instruction %u\n", rc,
            VTAReadMappedReg(regs, VTA_REG(ERROR_CODE)), VTAReadMappedReg(regs, VTA_REG(ERROR_INSN)));
    return 1;
  }
  uint32_t cycles = VTAReadMappedReg(regs, VTA_REG(CYCLES));
  VTAInvalidateCache(dram, dram_phy, (int)image_size);
  unsigned char* out = malloc(image_size);
  VTAMemCopyToHost(out, dram, image_size);

  int status = 0;
  for (size_t i = 0; i < image_size; i++) {
    if (out[i] != expected[i]) {
      printf("FAIL: first difference at byte %zu: expected 0x%02x, the card 0x%02x\n", i,
             expected[i], out[i]);
      status = 1;
      break;
    }
  }
  if (!status) {
    printf("PASS: %zu image bytes equal the expected ones; %u instructions in %u cycles\n",
           image_size, (unsigned)(code_size / 16), cycles);
  }
  VTAMemFree(insns);
  VTAMemFree(dram);
  VTAUnmapRegister(regs);
  VTADeviceFree(dev);
  free(out);
  free(code);
  free(image);
  free(expected);
  return status;
}
