"""The property modules of the formal flow (vtabench.verify.formal): one per unit of hdl/."""
