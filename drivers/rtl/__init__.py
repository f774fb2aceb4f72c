"""The rtl target: the simulated PCIe card as a device any process can open.

- :mod:`.device`: :class:`~.device.RtlDevice`, the driver (target ``rtl`` of the driver API);
- :mod:`.protocol`: the socket protocol between drivers (Python, C) and the simulator;
- :mod:`.server`: the simulator's side, a cocotb test serving requests on the platform model;
- :mod:`.launcher`: starting a simulator (``vtabench serve``, or one per device);
- :mod:`.bench`: the core bench (many programs per simulator) as the target's ``bench``;
- :mod:`.errors`: what the driver raises;
- :mod:`.c_driver`: building the C driver (upstream VTA's driver ABI) and its example.
"""
