"""The rtl target: the simulated PCIe card as a device any process can open.

- :mod:`.device`: :class:`~.device.RtlDevice`, the driver (target ``rtl`` of the driver API);
- :mod:`vtabench.tb.platform.protocol`: the card's socket protocol, which drivers (Python, C) speak;
  :mod:`vtabench.tb.platform.server`, the simulator's side, serves it on the platform model;
- :mod:`.launcher`: starting a simulator (``vtabench serve``, or one per device);
- :mod:`.bench`: the core bench (many programs per simulator) as the target's ``bench``;
- :mod:`.errors`: what the driver raises;
- :mod:`.c_driver`: building the C driver (upstream VTA's driver ABI) and its example.
"""
