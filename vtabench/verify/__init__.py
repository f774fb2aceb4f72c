"""Verification: test-program builder, directed and random programs, the random differential
regression, the on-board smoke test and the end-to-end network check (`vtabench sim`)."""
