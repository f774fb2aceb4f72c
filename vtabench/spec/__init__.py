"""The spec: hardware configurations, the ISA (encoding, assembler), the token machine and the
program validator. Every target and the compiler take their facts from here."""
