/*
 * The driver interface of upstream VTA (apache/tvm-vta, include/vta/driver.h): the entry points
 * a VTA runtime calls, declared here with upstream's names and signatures so that a runtime or a
 * driver written against upstream's header builds against the simulated card unchanged.
 *
 * This implementation (vta_sim_driver.c, libvtasim.a) talks to a vtabench simulator over its
 * socket (docs/platform.md): the card's registers are BAR0 MMIO requests, buffers are host
 * copies of device DRAM moved by DMA requests, a run waits for the card's interrupt.
 *
 * Errors. Upstream's entry points return nothing a caller could test for a bad argument (the
 * copies, flushes and frees are void, VTAMemGetPhyAddr has no address that means "none", and
 * VTAMemAlloc's NULL means only "no memory"), so this implementation reports what it must refuse
 * on stderr, one line starting "vta sim driver: ", and ends the process:
 *
 * - a misuse by the calling program, which a real card would turn into corrupted memory: a copy
 *   (VTAMemCopyFromHost, VTAMemCopyToHost; a device-to-device copy is one whose host pointer is
 *   another buffer), VTAFlushCache or VTAInvalidateCache that runs past the end of the buffer it
 *   starts in (the size asked of VTAMemAlloc), a device address that is not the buffer's, a
 *   negative size, a use of a freed buffer, a double free, a pointer that is no buffer. The line
 *   names the function, the buffer (host pointer, device address, size) and the offending offset
 *   and size; then abort() (SIGABRT), as the C library does on a double free: the process stops
 *   at the faulting call, under a debugger or in a core file, and no later call runs on memory
 *   that is already wrong. Freed buffers are remembered (their host copies kept, 64 MiB of the
 *   latest at most), so a later use or free of one is named as such;
 * - a card that fails (a lost connection, a failed DMA, a mismatched VERSION): exit status 1.
 *
 * VTADeviceRun, which returns a status, returns its failures (below).
 */
#ifndef VTA_DRIVER_H_
#define VTA_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief VTAMemAlloc: a buffer the CPU caches (copies stay on the host until a flush). */
#define VTA_CACHED 1
/*! \brief VTAMemAlloc: a buffer the CPU does not cache (every copy goes to the device). */
#define VTA_NOT_CACHED 0

/*! \brief Largest physically contiguous buffer. */
#ifndef VTA_MAX_XFER
#define VTA_MAX_XFER (1 << 25)
#endif

/*! \brief Page size of device allocations. */
#define VTA_PAGE_BITS 12
#define VTA_PAGE_BYTES (1 << VTA_PAGE_BITS)

/*! \brief A device handle (VTADeviceAlloc). */
typedef void* VTADeviceHandle;

/*! \brief A device physical address (64-bit with USE_VTA64, as the simulated card's BAR0
 *  pointers are; the library is built with it). */
#ifdef USE_VTA64
typedef uint64_t vta_phy_addr_t;
#else
typedef uint32_t vta_phy_addr_t;
#endif

/*! \brief A device handle; connects to the card on first use. */
VTADeviceHandle VTADeviceAlloc(void);

/*! \brief Give a device handle back. */
void VTADeviceFree(VTADeviceHandle handle);

/*!
 * \brief Run insn_count instructions at insn_phy_addr and wait until the card is done.
 * \param wait_cycles the longest wait in core clock cycles (0: no limit).
 * \return 0 when the run completed, 1 on a timeout; this implementation also returns 2 when the
 *         core stopped with an error (ERROR_CODE, ERROR_INSN in BAR0) and 3 when the card was
 *         still busy with an earlier run.
 */
int VTADeviceRun(VTADeviceHandle device, vta_phy_addr_t insn_phy_addr, uint32_t insn_count,
                 uint32_t wait_cycles);

/*! \brief A buffer of size bytes of device memory and its host copy (returned). */
void* VTAMemAlloc(size_t size, int cached);

/*! \brief Free a buffer of VTAMemAlloc. */
void VTAMemFree(void* buf);

/*! \brief The device address of a VTAMemAlloc buffer (or of a byte inside one). */
vta_phy_addr_t VTAMemGetPhyAddr(void* buf);

/*! \brief Copy host memory into a VTAMemAlloc buffer (through to the device if not cached). */
void VTAMemCopyFromHost(void* dst, const void* src, size_t size);

/*! \brief Copy a VTAMemAlloc buffer to host memory (from the device first if not cached). */
void VTAMemCopyToHost(void* dst, const void* src, size_t size);

/*! \brief Write a buffer's host copy to the device (DMA host to device). */
void VTAFlushCache(void* vir_addr, vta_phy_addr_t phy_addr, int size);

/*! \brief Read the device into a buffer's host copy (DMA device to host). */
void VTAInvalidateCache(void* vir_addr, vta_phy_addr_t phy_addr, int size);

/*! \brief A handle on the card's registers from BAR0 offset addr. */
void* VTAMapRegister(uint32_t addr);

/*! \brief Give a register handle back. */
void VTAUnmapRegister(void* vta);

/*! \brief Write the 32-bit register at offset of a register handle (one MMIO write). */
void VTAWriteMappedReg(void* base_addr, uint32_t offset, uint32_t val);

/*! \brief Read the 32-bit register at offset of a register handle (one MMIO read). */
uint32_t VTAReadMappedReg(void* base_addr, uint32_t offset);

#ifdef __cplusplus
}
#endif
#endif /* VTA_DRIVER_H_ */
