"""The OpenCL kernel (``vta.cl``) and its generated per-configuration headers (``gen/``)."""
