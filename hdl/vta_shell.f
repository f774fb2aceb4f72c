# vta_shell, the host shell IP: the core, then the register block and the shell around them
# (format: vta_core.f).
-f vta_core.f
gen/vta_regs_pkg.sv
gen/vta_regs.sv
vta_shell.sv
