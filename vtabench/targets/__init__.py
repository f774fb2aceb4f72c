"""Design entries held to the spec: the SystemVerilog core (:mod:`.rtl`) and the OpenCL kernel
(:mod:`.opencl`), with their sources, benches and builds."""
